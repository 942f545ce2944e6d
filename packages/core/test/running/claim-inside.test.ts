import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest, type ManualClock } from '@payhook/testing';
import { createReceiver, NonRetriableError, type EventHandler, type HandlerContext, type PaymentEvent } from '../../src/index.js';
import { CLAIM_INSIDE, type ClaimInside } from '../../src/store.js';
import { spiedStore } from '../spied-store.js';
import { asFreshProcess } from '../fresh-process.js';

/**
 * The claim-and-run step with a handler that claims inside its own transaction (steps/claim/claim-inside.ts):
 * the receiver calls it instead of claiming, and reads its answers. The handler here is a
 * transaction in miniature over the memory store: it claims, runs the effect, and marks the key done
 * as one step the receiver does not see, and an effect that throws leaves the key released, as a
 * rollback leaves it free. Postgres's own is tested in store-postgres/test/claim-inside.test.ts.
 */
const secret = 'whsec_claim_inside';
const quiet = { info() {}, warn() {}, error() {} };
asFreshProcess();

const text = async (r: Response | Promise<Response>) => {
  const res = await r;
  return `${res.status} ${((await res.json()) as { outcome: string }).outcome}`;
};

function setUp(clock: ManualClock, effect: (event: PaymentEvent, ctx: HandlerContext) => unknown) {
  const { store, calls } = spiedStore(clock);
  const inner = { claims: 0, attempts: [] as number[] };
  const handler: EventHandler & { [CLAIM_INSIDE]?: ClaimInside } = (event, ctx) => effect(event, ctx);
  handler[CLAIM_INSIDE] = async (event, context, leaseMs, claimed) => {
    inner.claims++;
    const c = await store.claim(context.dedupeKey, leaseMs);
    if (c.status !== 'claimed') return c;
    claimed(c.token, c.attempt);
    inner.attempts.push(c.attempt);
    try {
      await effect(event, { ...context, claimToken: c.token, attempt: c.attempt, redelivery: c.attempt > 1 });
    } catch (error) {
      await store.release(context.dedupeKey, c.token);
      throw error;
    }
    await store.complete(context.dedupeKey, c.token);
    return { status: 'ran' };
  };
  const receiver = createReceiver({ secret, clock, store, budgetMs: 100, logger: quiet }).on('payment.success', handler);
  // The receiver's own calls of the store: the handler's claim above goes to the store beside the spy.
  return { receiver, calls, inner, store };
}

describe('a handler that claims inside its own transaction', () => {
  it('is called instead of the claim, and its run is the delivery: no claim or complete of the receiver', async () => {
    const clock = manualClock(0);
    const ran: number[] = [];
    const { receiver, calls, inner } = setUp(clock, (_e, ctx) => void ran.push(ctx.attempt));
    const event = createEvent('payment.success');
    expect(await text(receiver.handle(signedRequest(event, { secret })))).toBe('200 processed');
    expect(calls).toEqual([]);
    expect(inner).toEqual({ claims: 1, attempts: [1] });
    // A copy: the handler's claim finds the key done and says so; the receiver answers from that.
    expect(await text(receiver.handle(signedRequest(event, { secret })))).toBe('200 duplicate');
    expect(ran).toEqual([1]);
    expect(inner.claims).toBe(2);
  });

  it('is not used where the event has a second handler: the receiver claims as always', async () => {
    const clock = manualClock(0);
    const { receiver, calls, inner } = setUp(clock, () => {});
    receiver.on('payment.success', () => {});
    expect(await text(receiver.handle(signedRequest(createEvent('payment.success'), { secret })))).toBe('200 processed');
    expect(inner.claims).toBe(0);
    expect(calls).toEqual(['claim@0', 'complete@0']);
  });

  it('answers 500 for an effect that throws, releasing nothing itself, and the retry runs it again', async () => {
    const clock = manualClock(0);
    let fail = true;
    const { receiver, calls, inner } = setUp(clock, () => {
      if (fail) throw new Error('the effect failed');
    });
    const event = createEvent('payment.success');
    expect(await text(receiver.handle(signedRequest(event, { secret })))).toBe('500 failed');
    expect(calls).toEqual([]);
    fail = false;
    expect(await text(receiver.handle(signedRequest(event, { secret })))).toBe('200 processed');
    expect(inner.attempts).toEqual([1, 2]);
  });

  it('records a NonRetriableError as rejected under a claim of the receiver, once the handler let its own go', async () => {
    const clock = manualClock(0);
    const { receiver, calls, store } = setUp(clock, () => {
      throw new NonRetriableError('not ours');
    });
    const event = createEvent('payment.success');
    expect(await text(receiver.handle(signedRequest(event, { secret })))).toBe('200 rejected');
    expect(calls).toEqual(['claim@0', 'complete@0']);
    expect(await store.get(`${event.mode}:${event.reference}:${event.event}`)).toMatchObject({ state: 'done', outcome: 'rejected' });
  });

  it('answers 503 when the handler fails before it has claimed: the store, not the effect', async () => {
    const clock = manualClock(0);
    const { store, calls } = spiedStore(clock);
    const broken: EventHandler & { [CLAIM_INSIDE]?: ClaimInside } = () => {};
    broken[CLAIM_INSIDE] = () => Promise.reject(new Error('no connection'));
    const receiver = createReceiver({ secret, clock, store, budgetMs: 100, logger: quiet }).on('payment.success', broken);
    expect(await text(receiver.handle(signedRequest(createEvent('payment.success'), { secret })))).toBe('503 store-unavailable');
    expect(calls).toEqual([]);
  });

  it('answers 202 at the budget once claimed, extends no lease, and reports the outcome later', async () => {
    const clock = manualClock(0);
    const { receiver, calls, store } = setUp(clock, () => clock.sleep(1_000));
    const event = createEvent('payment.success');
    const response = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(100);
    expect(await text(response)).toBe('202 accepted');
    expect(await store.get(`${event.mode}:${event.reference}:${event.event}`)).toMatchObject({ state: 'claimed' });
    await clock.advance(10_000);
    expect(calls).toEqual([]);
    expect(await store.get(`${event.mode}:${event.reference}:${event.event}`)).toMatchObject({ state: 'done', outcome: 'ok' });
  });
});
