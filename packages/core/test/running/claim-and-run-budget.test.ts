import { describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type DeliveryReport, type PaymentEvent } from '../../src/index.js';
import { createJobRunner, type QueuedEvent } from '../../src/queue.js';
import { spiedStore } from '../spied-store.js';
import { asFreshProcess } from '../fresh-process.js';
import { watch } from '../watch.js';

/**
 * The claim-and-run step against time (pipeline/claim-and-run.ts): what a delivery is answered at
 * its budget, how its claim is kept alive after, and how runs without a budget (a reconcile, a
 * queue worker) wait and keep their claims. Time is a manual clock throughout.
 */
const secret = 'whsec_claim_and_run_budget';
const quiet = { info() {}, warn() {}, error() {} };
asFreshProcess();

const text = async (r: Response) => `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;

describe('past the budget, with the handler still running', () => {
  it.each([
    ['accept', false, '202 accepted', 1],
    ['accept', true, '202 accepted', 0],
    ['retry', false, '503 deferred', 0],
    ['retry', true, '202 accepted', 0],
  ] as const)(
    'afterBudget %s, waitUntil given: %s: answers %s; warns of frozen work on a serverless platform %i time(s)',
    async (afterBudget, given, answer, warnings) => {
      vi.stubEnv('VERCEL', '1');
      const clock = manualClock(0);
      const warned: unknown[] = [];
      const logger = (_level: string, fields: object) => void ('cause' in fields && warned.push(fields));
      const receiver = createReceiver({
        secret,
        clock,
        budgetMs: 100,
        afterBudget,
        logger,
        store: memoryStore({ now: clock.now, warn: false }),
      });
      receiver.on('payment.success', () => clock.sleep(600));
      const handed: ReturnType<typeof watch>[] = [];
      const waitUntil = (work: Promise<unknown>) => void handed.push(watch(work));
      const response = receiver.handle(signedRequest(createEvent('payment.success'), { secret }), given ? { waitUntil } : {});
      await clock.advance(100);
      expect(await text(await response)).toBe(answer);
      expect(warned).toEqual(Array(warnings).fill({ cause: 'accepted-serverless', platform: 'Vercel' }));
      // The platform's waitUntil holds the work until the handler's outcome is recorded, not just to the answer.
      expect(handed.map((h) => h.settled)).toEqual(given ? [false] : []);
      await clock.advance(500);
      expect(handed.map((h) => h.settled)).toEqual(given ? [true] : []);
    },
  );

  it('extends the claim at the budget and every leaseMs / 3 until the handler ends, then reports its outcome late with its whole duration', async () => {
    const clock = manualClock(1_000);
    const { store, calls } = spiedStore(clock);
    const lines: DeliveryReport[] = [];
    const logger = (_level: string, fields: object) => void ('outcome' in fields && lines.push(fields as DeliveryReport));
    const receiver = createReceiver({ secret, clock, store, budgetMs: 100, leaseMs: 300, logger });
    receiver.on('payment.success', () => clock.sleep(600));
    const event = createEvent('payment.success');
    const response = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(100);
    expect(await text(await response)).toBe('202 accepted');
    await clock.advance(1_000);
    expect(calls).toEqual(['claim@1000', 'extend@1100', 'extend@1200', 'extend@1300', 'extend@1400', 'extend@1500', 'complete@1600']);
    expect(lines.filter((l) => l.late)).toEqual([
      expect.objectContaining({ outcome: 'processed', reference: event.reference, durationMs: 600 }),
    ]);
    expect(await store.get(receiver.dedupeKey(event))).toMatchObject({ state: 'done' });
  });

  it('answers 409 to a copy still waiting for the running delivery at its budget, and the copy claims no more after', async () => {
    const clock = manualClock(0);
    const { store, calls } = spiedStore(clock);
    // The copy claims twice at once (the second once its watch is on), then waits to be told.
    const receiver = createReceiver({ secret, clock, store, budgetMs: 375, logger: quiet });
    receiver.on('payment.success', () => clock.sleep(5_000));
    const event = createEvent('payment.success');
    const answers = [receiver.handle(signedRequest(event, { secret })), receiver.handle(signedRequest(event, { secret }))];
    await clock.advance(375);
    expect(await Promise.all(answers.map(async (a) => text(await a)))).toEqual(['202 accepted', '409 in-progress']);
    await clock.advance(1_000);
    expect(calls.filter((c) => c.startsWith('claim'))).toEqual(['claim@0', 'claim@0', 'claim@0']);
  });
});

describe('runs without a budget', () => {
  const job = (event: PaymentEvent): QueuedEvent => ({
    v: 1,
    event,
    dedupeKey: `job:${event.reference}`,
    source: 'webhook',
    secretIndex: 0,
    queuedAt: 0,
  });
  const info = { id: 'job-1', attempt: 1, maxAttempts: 5, queue: 'payhook' };

  it('a queue worker keeps its claim alive every leaseMs / 3 while the handler runs, and stops when it ends', async () => {
    const clock = manualClock(0);
    const { store, calls } = spiedStore(clock);
    const runner = createJobRunner({ store, clock, leaseMs: 300, logger: quiet }).on('payment.success', () => clock.sleep(1_000));
    const verdict = runner.run(job(createEvent('payment.success')), info);
    await clock.advance(2_000);
    expect(await verdict).toMatchObject({ action: 'complete', report: { outcome: 'processed' } });
    expect(calls).toEqual(['claim@0', ...[100, 200, 300, 400, 500, 600, 700, 800, 900].map((t) => `extend@${t}`), 'complete@1000']);
  });

  it("a queue worker's copy waits up to two leases for the running one: duplicate if it ends in time, in-progress if not", async () => {
    const clock = manualClock(0);
    const runner = createJobRunner({ store: memoryStore({ now: clock.now, warn: false }), clock, leaseMs: 300, logger: quiet })
      .on('payment.success', () => clock.sleep(300))
      .on('payment.failed', () => clock.sleep(1_000));
    const [quick, slow] = [job(createEvent('payment.success')), job(createEvent('payment.failed'))];
    void runner.run(quick, info);
    void runner.run(slow, info);
    const copies = [watch(runner.run(quick, info)), watch(runner.run(slow, info))];
    // Told when the quick one is done (300 ms); the slow one's copy gives up at two leases (600 ms).
    await clock.advance(299);
    expect(copies.map((c) => c.settled)).toEqual([false, false]);
    await clock.advance(1);
    expect(copies.map((c) => c.settled)).toEqual([true, false]);
    await clock.advance(300);
    expect(copies.map((c) => c.settled)).toEqual([true, true]);
    const verdicts = await Promise.all(copies.map((c) => c.promise));
    expect(verdicts.map((v) => `${v.action} ${v.report.outcome}`)).toEqual(['complete duplicate', 'complete in-progress']);
    await clock.advance(1_000);
  });

  it('a reconcile that finds its event running answers in-progress at once, and runs nothing', async () => {
    const clock = manualClock(0);
    const receiver = createReceiver({ secret, clock, budgetMs: 100, store: memoryStore({ now: clock.now, warn: false }), logger: quiet });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(1_000);
    });
    const event = createEvent('payment.success');
    const delivery = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(0);
    const recovered = watch(receiver.dispatch(event));
    await clock.advance(0);
    expect(recovered.settled).toBe(true);
    expect(await recovered.promise).toMatchObject({ outcome: 'in-progress', source: 'reconcile' });
    await clock.advance(1_000);
    expect(await text(await delivery)).toBe('202 accepted');
    expect(runs).toBe(1);
  });

  it('on a platform whose timers end with the request (workerd: a timer per delivery), a reconcile still waits for its handler', async () => {
    vi.resetModules();
    vi.doMock('../../src/platform/node-apis.js', async (original) => ({ ...(await original<object>()), timersOutliveRequests: false }));
    try {
      const core = await import('../../src/index.js');
      const clock = manualClock(0);
      const receiver = core.createReceiver({
        secret,
        clock,
        budgetMs: 100,
        store: core.memoryStore({ now: clock.now, warn: false }),
        logger: quiet,
      });
      receiver.on('payment.success', () => clock.sleep(500));
      const recovered = receiver.dispatch(createEvent('payment.success'));
      await clock.advance(500);
      expect(await recovered).toMatchObject({ outcome: 'processed', status: 200 });
    } finally {
      vi.doUnmock('../../src/platform/node-apis.js');
      vi.resetModules();
    }
  });
});
