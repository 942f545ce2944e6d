import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest, type ManualClock } from '@payhook/testing';
import {
  createReceiver,
  memoryStore,
  NonRetriableError,
  type DeliveryReport,
  type HandlerContext,
  type ReceiverOptions,
  type RecordClient,
  type Store,
  type TransactionRecord,
} from '../../src/index.js';
import { spiedStore } from '../spied-store.js';

/**
 * The claim-and-run step (pipeline/claim-and-run.ts): which answer a delivery gets from what the
 * store and the handlers do, and what it leaves in the store. Time is a manual clock throughout.
 */
const secret = 'whsec_claim_and_run';
type Line = DeliveryReport & { level: string; err?: unknown; message: string };

function setup(options: Partial<ReceiverOptions> & { clock?: ManualClock } = {}) {
  const clock = options.clock ?? manualClock(0);
  const lines: Line[] = [];
  const receiver = createReceiver({
    secret,
    clock,
    budgetMs: 100,
    store: memoryStore({ now: clock.now, warn: false }),
    logger: (level, fields, message) => void ('outcome' in fields && lines.push({ level, ...(fields as DeliveryReport), message })),
    ...options,
  });
  const send = async (event: object) => {
    const r = await receiver.handle(signedRequest(event, { secret }));
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  return { clock, receiver, lines, send };
}

describe('claiming the event', () => {
  it('answers an event nobody handles `ignored` without claiming it, so a handler added later runs the retry', async () => {
    const clock = manualClock(0);
    const { store, calls } = spiedStore(clock);
    const { receiver, send } = setup({ clock, store });
    receiver.on('payment.failed', () => {});
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('200 ignored');
    expect(calls).toEqual([]);
    expect(await store.get(receiver.dedupeKey(event))).toBeUndefined();
    let runs = 0;
    receiver.on('payment.success', () => void (runs += 1));
    expect(await send(event)).toBe('200 processed');
    expect(runs).toBe(1);
  });

  it('reports which of the secrets matched, and none for a recovered event (its handler sees null)', async () => {
    const { receiver, lines, send } = setup({ secret: ['whsec_new', secret] });
    const seen: HandlerContext['secretIndex'][] = [];
    receiver.on('payment.success', (_e, ctx) => void seen.push(ctx.secretIndex));
    expect(await send(createEvent('payment.success'))).toBe('200 processed');
    expect(lines.at(-1)).toMatchObject({ outcome: 'processed', secretIndex: 1 });
    const recovered = await receiver.dispatch(createEvent('payment.success'));
    expect(recovered.outcome).toBe('processed');
    expect(recovered.secretIndex).toBeUndefined();
    expect(seen).toEqual([1, null]);
  });

  it('answers 503 when the store throws at the claim, logs the error with the delivery, and runs nothing', async () => {
    const inner = memoryStore({ warn: false });
    const down = new Error('connection pool exhausted');
    const store: Store = {
      ...inner,
      claim: () => {
        throw down;
      },
    };
    const { receiver, lines, send } = setup({ store });
    let runs = 0;
    receiver.on('payment.success', () => void (runs += 1));
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('503 store-unavailable');
    expect(lines.at(-1)).toMatchObject({
      level: 'error',
      outcome: 'store-unavailable',
      reference: event.reference,
      dedupeKey: receiver.dedupeKey(event),
      err: down,
    });
    expect(runs).toBe(0);
  });

  it('answers 500 when the store answers a claim with something unreadable, logged with the delivery and the error', async () => {
    const store: Store = { ...memoryStore({ warn: false }), claim: async () => null as never };
    const { receiver, lines, send } = setup({ store });
    receiver.on('payment.success', () => {});
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('500 failed');
    expect(lines.at(-1)).toMatchObject({ outcome: 'failed', reference: event.reference, event: 'payment.success' });
    expect(String(lines.at(-1)!.err)).toMatch(/TypeError.*'status'/);
  });

  it('answers 503 exactly at the budget when the claim never comes back, and logs why', async () => {
    const clock = manualClock(0);
    const store: Store = { ...memoryStore({ now: clock.now, warn: false }), claim: () => new Promise(() => {}) };
    const { receiver, lines, send } = setup({ clock, store });
    receiver.on('payment.success', () => {});
    const event = createEvent('payment.success');
    const answer = send(event);
    await clock.advance(100);
    expect(await answer).toBe('503 store-unavailable');
    expect(lines.at(-1)).toMatchObject({ outcome: 'store-unavailable', reference: event.reference });
    expect((lines.at(-1)!.err as Error).message).toBe(
      '[@payhook/core] the store did not answer a claim within 100 ms; check that it is reachable.',
    );
  });

  it('gives back a claim that lands after the 503, so the retry runs the event; one that finds the event done gives nothing back', async () => {
    const clock = manualClock(0);
    const inner = memoryStore({ now: clock.now, warn: false });
    const slowOnce = new Set<string>();
    const released: string[] = [];
    const store: Store = {
      ...inner,
      claim: async (k, l) => (slowOnce.delete(k) && (await clock.sleep(400)), inner.claim(k, l)),
      release: (k, t) => (released.push(k), inner.release(k, t)),
    };
    const { receiver, send } = setup({ clock, store });
    let runs = 0;
    receiver.on(['payment.success', 'payment.failed'], () => void (runs += 1));
    const [claimed, done] = [createEvent('payment.success'), createEvent('payment.failed')];
    for (const e of [claimed, done]) slowOnce.add(receiver.dedupeKey(e));
    const answers = [send(claimed), send(done)];
    await clock.advance(100);
    expect(await Promise.all(answers)).toEqual(['503 store-unavailable', '503 store-unavailable']);
    await clock.advance(50);
    expect(await send(done)).toBe('200 processed'); // the retry of the second, before its first claim lands
    await clock.advance(250); // t = 400: both late claims land
    expect(released).toEqual([receiver.dedupeKey(claimed)]);
    expect(await store.get(receiver.dedupeKey(claimed))).toMatchObject({ state: 'released', attempt: 1 });
    expect(await store.get(receiver.dedupeKey(done))).toMatchObject({ state: 'done' });
    expect(await send(claimed)).toBe('200 processed');
    expect(runs).toBe(2);
  });
});

describe('the record check', () => {
  /** A client answering a record of `status.now` for any reference. */
  const client = (status: { now: string }): RecordClient => {
    const record = async (reference: string) => ({ reference, status: status.now }) as unknown as TransactionRecord;
    return { transactions: { verify: record, retrieve: record } };
  };

  it.each([
    ['a handler registered with { verify: true }', false, { verify: true }],
    ['verifyBeforeHandling', true, undefined],
  ] as const)(
    '%s: a record that disagrees answers mismatch and gives the claim back; one that agrees runs the handler with it',
    async (_, verifyBeforeHandling, handlerOptions) => {
      const status = { now: 'failed' };
      const { receiver, lines, send } = setup({ client: client(status), verifyBeforeHandling });
      const records: unknown[] = [];
      receiver.on('payment.success', (_e, ctx) => void records.push(ctx.record?.status), handlerOptions);
      const event = createEvent('payment.success');
      const key = receiver.dedupeKey(event);
      expect(await send(event)).toBe('200 mismatch');
      expect(lines.at(-1)).toMatchObject({ outcome: 'mismatch', reference: event.reference, dedupeKey: key, attempt: 1 });
      expect(String(lines.at(-1)!.err)).toMatch(/is failed, which does not agree with payment.success/);
      expect(await receiver.store.get(key)).toMatchObject({ state: 'released' });
      // A record the event moves further is the API behind its own webhook: 503, so the service comes back.
      status.now = 'processing';
      expect(await send(event)).toBe('503 verify-unavailable');
      expect(String(lines.at(-1)!.err)).toMatch(/still says processing, behind the payment.success it sent/);
      expect(await receiver.store.get(key)).toMatchObject({ state: 'released' });
      status.now = 'completed';
      expect(await send(event)).toBe('200 processed');
      expect(records).toEqual(['completed']);
    },
  );
});

describe('running the handlers and recording the outcome', () => {
  it("writes the done record with the receiver's retentionMs, after a synchronous handler and an asynchronous one", async () => {
    const { receiver, clock, send } = setup({ retentionMs: 60_000 });
    receiver.on('payment.success', () => {}).on('payment.failed', async () => {});
    const events = [createEvent('payment.success'), createEvent('payment.failed')];
    for (const e of events) expect(await send(e)).toBe('200 processed');
    const states = async () => Promise.all(events.map(async (e) => (await receiver.store.get(receiver.dedupeKey(e)))?.state));
    await clock.advance(59_999);
    expect(await states()).toEqual(['done', 'done']);
    await clock.advance(1);
    expect(await states()).toEqual([undefined, undefined]);
  });

  it('records NonRetriableError as done (rejected) and answers rejected; a plain throw answers 500 and gives the claim back', async () => {
    const { receiver, send } = setup();
    receiver.on('payment.success', () => {
      throw new NonRetriableError('no such order');
    });
    receiver.on('payment.failed', () => {
      throw new Error('database down');
    });
    const [rejected, failed] = [createEvent('payment.success'), createEvent('payment.failed')];
    expect(await send(rejected)).toBe('200 rejected');
    expect(await receiver.store.get(receiver.dedupeKey(rejected))).toMatchObject({ state: 'done', outcome: 'rejected' });
    expect(await send(failed)).toBe('500 failed');
    expect(await receiver.store.get(receiver.dedupeKey(failed))).toMatchObject({ state: 'released' });
  });

  it('answers processed when the done record fails to be written, with no error, and writes it in the background', async () => {
    const clock = manualClock(0);
    let failures = 1;
    const { store, calls } = spiedStore(clock, (own) => ({
      complete: (k, t, o) => {
        if (failures-- > 0) throw new Error('connection reset');
        return own.complete(k, t, o);
      },
    }));
    const { receiver, lines, send } = setup({ clock, store });
    receiver.on('payment.success', () => {});
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('200 processed');
    expect(lines.at(-1)).toMatchObject({ level: 'info', outcome: 'processed' });
    expect(lines.at(-1)!.err).toBeUndefined();
    expect(await store.get(receiver.dedupeKey(event))).toMatchObject({ state: 'claimed' });
    await clock.advance(250);
    expect(await store.get(receiver.dedupeKey(event))).toMatchObject({ state: 'done', outcome: 'ok' });
    expect(calls.filter((c) => c.startsWith('complete'))).toEqual(['complete@0', 'complete@250']);
  });

  it('answers processed but logs an error naming leaseMs when the store says the claim was lost before the done record', async () => {
    const clock = manualClock(0);
    let lost = false;
    const { store } = spiedStore(clock, (own) => ({ complete: (k, t, o) => !lost && own.complete(k, t, o) }));
    const { receiver, lines, send } = setup({ clock, store });
    receiver.on('payment.success', () => {});
    expect(await send(createEvent('payment.success'))).toBe('200 processed');
    expect(lines.at(-1)).toMatchObject({ level: 'info', outcome: 'processed' });
    expect(lines.at(-1)!.err).toBeUndefined();
    lost = true;
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('200 processed');
    const key = receiver.dedupeKey(event);
    expect(lines.at(-1)).toMatchObject({ level: 'error', outcome: 'processed', reference: event.reference, dedupeKey: key });
    expect((lines.at(-1)!.err as Error).message).toBe(
      `[@payhook/core] the claim on ${key} expired before its handler finished, so another delivery may have run it too. Raise leaseMs above your slowest handler.`,
    );
  });

  it('reports a done record the store keeps refusing, even without a reason, as a late outcome', async () => {
    const clock = manualClock(0);
    const { store } = spiedStore(clock, () => ({ complete: () => Promise.reject() }));
    const { receiver, lines, send } = setup({ clock, store });
    receiver.on('payment.success', () => {});
    const event = createEvent('payment.success');
    expect(await send(event)).toBe('200 processed');
    for (let t = 0; t < 40_000; t += 1_000) await clock.advance(1_000);
    expect(lines.filter((l) => l.late)).toEqual([
      expect.objectContaining({ outcome: 'processed', late: true, reference: event.reference }),
    ]);
  });
});

describe('the answer', () => {
  it('says it is JSON, whatever the outcome', async () => {
    const { receiver } = setup();
    receiver.on('payment.success', () => {});
    for (const event of [createEvent('payment.success'), createEvent('payment.failed')]) {
      const r = await receiver.handle(signedRequest(event, { secret }));
      expect(r.headers.get('content-type')).toBe('application/json');
    }
  });
});
