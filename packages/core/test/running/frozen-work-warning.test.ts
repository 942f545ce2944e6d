import { describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type LogLevel, type ReceiverOptions } from '../../src/index.js';
import { asFreshProcess } from '../fresh-process.js';

/**
 * Issue 33: on a serverless platform, a 202 past the budget with no `waitUntil` leaves work the
 * platform may freeze, and the service never sends the event again. The first such answer in a
 * process says so, at warn (the default level shows it).
 */
const secret = 'whsec_frozen_work';
asFreshProcess();

/** Two deliveries whose handler outlives a 100 ms budget; the platform warnings the receiver's logger got, and the answers. */
async function twoSlowDeliveries(options: Partial<ReceiverOptions> = {}, waitUntil?: (work: Promise<unknown>) => void) {
  const clock = manualClock(0);
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  // Warnings that carry a cause (the platform warnings), not the delivery reports (a 503 deferred is one).
  const logger = (level: LogLevel, fields: object, message: string) =>
    void (level === 'warn' && 'cause' in fields && warnings.push({ fields: fields as Record<string, unknown>, message }));
  // The memory store's own serverless warning is silenced: only the 202's is looked at.
  const receiver = createReceiver({
    secret,
    store: memoryStore({ now: clock.now, warn: false }),
    clock,
    budgetMs: 100,
    logger,
    ...options,
  }).on('payment.success', () => clock.sleep(1_000));
  const answers: string[] = [];
  for (let i = 0; i < 2; i++) {
    const response = receiver.handle(signedRequest(createEvent('payment.success'), { secret }), waitUntil ? { waitUntil } : undefined);
    for (let t = 0; t < 1_200; t += 50) await clock.advance(50);
    const r = await response;
    answers.push(`${r.status} ${((await r.json()) as { outcome: string }).outcome}`);
  }
  return { warnings, answers };
}

describe('a 202 past the budget on a serverless platform', () => {
  it('warns once, naming the platform, waitUntil and afterBudget: retry', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'shop-webhooks');
    const { warnings, answers } = await twoSlowDeliveries();
    expect(answers).toEqual(['202 accepted', '202 accepted']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toEqual({ cause: 'accepted-serverless', platform: 'AWS Lambda' });
    expect(warnings[0]!.message).toMatch(
      /^\[@payhook\/core\] a handler ran past budgetMs and was answered 202 on AWS Lambda with no waitUntil: .*Pass the platform's waitUntil .*or set afterBudget: 'retry'/,
    );
  });

  it("says nothing with the platform's waitUntil, with afterBudget: 'retry', or off serverless platforms", async () => {
    vi.stubEnv('VERCEL', '1');
    expect((await twoSlowDeliveries({}, () => {})).warnings).toEqual([]);
    const retry = await twoSlowDeliveries({ afterBudget: 'retry' });
    expect(retry.answers).toEqual(['503 deferred', '503 deferred']);
    expect(retry.warnings).toEqual([]);
    vi.stubEnv('VERCEL', undefined);
    const plain = await twoSlowDeliveries();
    expect(plain.answers).toEqual(['202 accepted', '202 accepted']);
    expect(plain.warnings).toEqual([]);
  });
});
