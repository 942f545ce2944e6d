import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, NonRetriableError, type HandlerContext } from '../../src/index.js';
import { createJobRunner, queuedKey, type Handoff, type JobInfo, type QueuedEvent } from '../../src/queue.js';

const secret = 'whsec_handoff';
const quiet = { info() {}, warn() {}, error() {} };
const job = (attempt = 1, maxAttempts = 3): JobInfo => ({ id: 'j1', attempt, maxAttempts, queue: 'q' });

/** A queue in memory: the jobs it was given, after `enqueueMs` on the clock. */
function memoryQueue(clock: ReturnType<typeof manualClock>, enqueueMs = 0) {
  const jobs: QueuedEvent[] = [];
  const handoff: Handoff = {
    async enqueue(queued) {
      if (enqueueMs > 0) await clock.sleep(enqueueMs);
      jobs.push(structuredClone(queued));
    },
  };
  return { jobs, handoff };
}

function setup(enqueueMs = 0) {
  const clock = manualClock(0);
  const store = memoryStore({ now: clock.now });
  const queue = memoryQueue(clock, enqueueMs);
  const receiver = createReceiver({ secret, store, clock, budgetMs: 200, leaseMs: 1_000, logger: quiet, handoff: queue.handoff });
  const deliver = async (reference = 'P1', waitUntil?: (p: Promise<unknown>) => void) => {
    const r = await receiver.handle(signedRequest(createEvent('payment.success', { reference }), { secret }), { waitUntil });
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  return { clock, store, queue, receiver, deliver };
}

describe('a receiver with a handoff', () => {
  it('queues the verified event under its own claim, with what a worker needs, and answers 200 queued; a copy 200 duplicate', async () => {
    const { store, queue, deliver } = setup();
    expect(await deliver()).toBe('200 queued');
    expect(await deliver()).toBe('200 duplicate');
    expect(queue.jobs).toHaveLength(1);
    expect(queue.jobs[0]).toMatchObject({
      v: 1,
      dedupeKey: 'sandbox:P1:payment.success',
      source: 'webhook',
      secretIndex: 0,
      event: { reference: 'P1' },
    });
    // The event's own key is left for the worker.
    expect(await store.get(queuedKey('sandbox:P1:payment.success'))).toMatchObject({ state: 'done' });
    expect(await store.get('sandbox:P1:payment.success')).toBeUndefined();
  });

  it('answers 503, never 202, when the enqueue outlives the budget, even with waitUntil; the retry then finds it queued', async () => {
    const { clock, queue, deliver } = setup(500);
    const held: Promise<unknown>[] = [];
    const answer = deliver('P2', (p) => void held.push(p));
    await clock.advance(200);
    expect(await answer).toBe('503 deferred');
    expect(held).toEqual([]);
    await clock.advance(300);
    expect(queue.jobs).toHaveLength(1);
    expect(await deliver('P2')).toBe('200 duplicate');
  });

  it('refuses handlers and verifyBeforeHandling here, and a handoff that is not a queue, saying where they go', () => {
    const { receiver } = setup();
    expect(() => receiver.on('payment.success', () => {})).toThrow(/register handlers on the worker/);
    expect(() => receiver.onAny(() => {})).toThrow(/\[@payhook\/core\].*createWorker/);
    const handoff = memoryQueue(manualClock(0)).handoff;
    expect(() => createReceiver({ secret, handoff, verifyBeforeHandling: true, client: {} as never })).toThrow(/set it on the worker/);
    expect(() => createReceiver({ secret, handoff: {} as Handoff })).toThrow(/handoff must be a queue/);
  });
});

describe('createJobRunner', () => {
  const queued = (reference = 'P9'): QueuedEvent => ({
    v: 1,
    event: createEvent('payment.success', { reference }),
    dedupeKey: `custom:${reference}`,
    source: 'reconcile',
    secretIndex: null,
    queuedAt: 0,
  });

  it("runs the handlers under the job's dedupe key with the receiver's ctx and ctx.job, once", async () => {
    const clock = manualClock(0);
    const runner = createJobRunner({ store: memoryStore({ now: clock.now }), clock, logger: quiet });
    const seen: HandlerContext[] = [];
    runner.on('payment.success', (_e, ctx) => void seen.push(ctx));
    expect((await runner.run(queued(), job())).action).toBe('complete');
    const again = await runner.run(queued(), job(2));
    expect(again).toMatchObject({ action: 'complete', report: { outcome: 'duplicate' } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ dedupeKey: 'custom:P9', source: 'reconcile', secretIndex: null, attempt: 1, job: job() });
  });

  it('asks for a retry while attempts remain, and the dead-letter queue on the last or on NonRetriableError', async () => {
    const clock = manualClock(0);
    const runner = createJobRunner({ store: memoryStore({ now: clock.now }), clock, logger: quiet });
    runner.on('payment.success', (event) => {
      throw event.reference === 'P-never' ? new NonRetriableError('unknown order') : new Error('db down');
    });
    expect(await runner.run(queued('P-flaky'), job(1, 2))).toMatchObject({ action: 'retry', error: { message: 'db down' } });
    expect(await runner.run(queued('P-flaky'), job(2, 2))).toMatchObject({ action: 'dead-letter', error: { message: 'db down' } });
    expect(await runner.run(queued('P-never'), job(1, 5))).toMatchObject({ action: 'dead-letter', report: { outcome: 'rejected' } });
  });

  it('dead-letters a job that no payhook receiver wrote, naming what is wrong', async () => {
    const runner = createJobRunner({ logger: quiet });
    const bad = await runner.run({ hello: 'world' }, job());
    expect(bad).toMatchObject({ action: 'dead-letter', report: { outcome: 'invalid' } });
    expect(bad.action === 'dead-letter' && bad.error.message).toMatch(/^\[@payhook\/core\] this job was not written by a payhook receiver/);
    const noEvent = await runner.run({ ...queued(), event: { reference: 'x' } }, job());
    expect(noEvent.action === 'dead-letter' && noEvent.error.message).toMatch(/not a payment event/);
  });

  it('keeps its claim alive through a handler longer than the lease; a copy waits for it, then leaves the event to it', async () => {
    const clock = manualClock(0);
    const store = memoryStore({ now: clock.now });
    const runner = createJobRunner({ store, clock, leaseMs: 1_000, logger: quiet });
    let runs = 0;
    runner.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(5_000);
    });
    const first = runner.run(queued(), job());
    // A stalled copy of the job, on its last attempt, starts while the first runs: it waits two
    // leases (the first keeps extending its claim, so it never lapses), then completes without
    // running anything and without a dead letter: the live run owns the event.
    const copy = runner.run(queued(), job(3, 3));
    for (let t = 0; t < 6_000; t += 250) await clock.advance(250);
    expect(await copy).toMatchObject({ action: 'complete', report: { outcome: 'in-progress' } });
    expect(await first).toMatchObject({ action: 'complete', report: { outcome: 'processed' } });
    expect(await runner.run(queued(), job(2))).toMatchObject({ action: 'complete', report: { outcome: 'duplicate' } });
    expect(runs).toBe(1);
  });
});
