import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type ReceiverOptions } from '../../src/index.js';

const secret = 'whsec_wait_until';
const quiet = { info() {}, warn() {}, error() {} };

/** A receiver on a manual clock whose handler takes `handlerMs`; `budgetMs` 200. */
function slowReceiver(handlerMs: number, options: Partial<ReceiverOptions> = {}) {
  const clock = manualClock(0);
  const store = memoryStore({ now: clock.now });
  const receiver = createReceiver({ secret, store, budgetMs: 200, clock, logger: quiet, ...options });
  const done: string[] = [];
  receiver.on('payment.success', async (event) => {
    await clock.sleep(handlerMs);
    done.push(event.reference);
  });
  return { clock, store, receiver, done };
}

/** A platform hook that records what it was asked to wait for, and when that settled. */
function platform() {
  const held: { settled: boolean }[] = [];
  const waitUntil = (work: Promise<unknown>) => {
    const entry = { settled: false };
    held.push(entry);
    void work.then(() => (entry.settled = true));
  };
  return { held, waitUntil };
}

describe('handle(request, { waitUntil })', () => {
  it('holds the platform open from the start of a delivery until its late handler has finished and been recorded', async () => {
    const { clock, store, receiver, done } = slowReceiver(600);
    const { held, waitUntil } = platform();
    const event = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(event, { secret }), { waitUntil });
    await clock.advance(0);
    expect(held).toHaveLength(1);
    await clock.advance(200);
    expect((await answer).status).toBe(202);
    expect(held[0]!.settled).toBe(false);
    await clock.advance(400);
    expect(done).toEqual([event.reference]);
    await clock.advance(0);
    expect(held[0]!.settled).toBe(true);
    expect(await store.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'done', outcome: 'ok' });
  });

  it('lets go as soon as the answer goes out when nothing is left to run', async () => {
    const { clock, receiver } = slowReceiver(50);
    const { held, waitUntil } = platform();
    const answer = receiver.handle(signedRequest(createEvent('payment.success'), { secret }), { waitUntil });
    await clock.advance(50);
    expect((await answer).status).toBe(200);
    await clock.advance(0);
    expect(held.map((h) => h.settled)).toEqual([true]);
  });

  it("calls the hook inside the delivery's own async context, as Next's after() needs", async () => {
    // The receiver's one deadline timer belongs to whichever request armed it: a hook called from it would see that request.
    const { clock, receiver } = slowReceiver(600);
    const requests = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const waitUntil = () => void seen.push(requests.getStore());
    const first = requests.run('first', () => receiver.handle(signedRequest(createEvent('payment.success'), { secret }), { waitUntil }));
    await clock.advance(100);
    const second = requests.run('second', () => receiver.handle(signedRequest(createEvent('payment.success'), { secret }), { waitUntil }));
    await clock.advance(200);
    expect([(await first).status, (await second).status]).toEqual([202, 202]);
    expect(seen).toEqual(['first', 'second']);
  });

  it('goes on as without a hook when the hook throws (called outside its request)', async () => {
    const { clock, receiver, done } = slowReceiver(600);
    const waitUntil = () => {
      throw new Error('`after` was called outside a request scope');
    };
    const event = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(event, { secret }), { waitUntil });
    await clock.advance(200);
    expect((await answer).status).toBe(202);
    await clock.advance(400);
    expect(done).toEqual([event.reference]);
  });

  it('answers as usual when the hook throws and the store keeps a ledger (its writes go on unheld)', async () => {
    const store = memoryStore({ ledger: true });
    const receiver = createReceiver({ secret, store, logger: quiet }).on('payment.success', () => {});
    const waitUntil = () => {
      throw new Error('`after` was called outside a request scope');
    };
    const event = createEvent('payment.success');
    const answer = await receiver.handle(signedRequest(event, { secret }), { waitUntil });
    expect([answer.status, (await answer.json()).outcome]).toEqual([200, 'processed']);
    await receiver.idle();
    expect((await store.ledger!.list({})).map((e) => e.outcome)).toEqual(['processed']);
  });
});

describe("afterBudget: 'retry', for platforms that freeze after the answer", () => {
  it('answers 503 at the budget when there is no waitUntil; the retry finds the event done', async () => {
    const { clock, receiver, done } = slowReceiver(600, { afterBudget: 'retry' });
    const event = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(200);
    const res = await answer;
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ outcome: 'deferred' });
    await clock.advance(400);
    const retry = await receiver.handle(signedRequest(event, { secret }));
    expect(await retry.json()).toEqual({ outcome: 'duplicate' });
    expect(done).toEqual([event.reference]);
  });

  it('still answers 202 when the platform gave a waitUntil', async () => {
    const { clock, receiver } = slowReceiver(600, { afterBudget: 'retry' });
    const answer = receiver.handle(signedRequest(createEvent('payment.success'), { secret }), { waitUntil: platform().waitUntil });
    await clock.advance(200);
    expect((await answer).status).toBe(202);
  });

  it('is checked when the receiver is created', () => {
    expect(() => createReceiver({ secret, afterBudget: 'later' as never })).toThrow(
      /^\[@payhook\/core\] afterBudget must be 'accept' or 'retry'/,
    );
  });
});
