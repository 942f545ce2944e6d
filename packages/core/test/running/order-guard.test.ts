import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest, type ManualClock } from '@payhook/testing';
import {
  createReceiver,
  memoryStore,
  type DeliveryReport,
  type PaymentEvent,
  type ReceiverOptions,
  type RecordClient,
  type Store,
} from '../../src/index.js';
import type { TransactionRecord } from '../../src/protocol/api-schema.js';
import { recordOf as serviceRecord } from '../fixtures/service-record.js';

const secret = 'whsec_order_guard';
const quiet = { info() {}, warn() {}, error() {} };
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/*
 * The ordering guard counts an earlier event as run once it happened before the store's memory:
 * its done record may be gone. The store's clock and the service's may disagree, so the edge has a
 * margin (docs/decisions/service-and-reference.md, "Ordering on the service's truth"): a tenth of the retention, at most
 * an hour. An earlier event within the margin of the edge counts as forgotten too; one past it,
 * well within the retention, is waited for. Here the success's time is the payload's paidAt (hold,
 * no client), on a manual clock the receiver and its store share.
 */
describe("the ordering guard's margin at the edge of the store's retention", () => {
  it.each([
    ['30 minutes: a tenth, 3 minutes', 30 * MINUTE, 3 * MINUTE],
    ['10 hours: a tenth, 1 hour', 10 * HOUR, HOUR],
    ['24 hours: at most an hour', 24 * HOUR, HOUR],
  ])('retention %s', async (_, retentionMs, marginMs) => {
    const clock = manualClock(1_700_000_000_000);
    const ran: string[] = [];
    const receiver = createReceiver({ secret, clock, store: memoryStore({ clock, retentionMs }), ordering: 'hold', logger: quiet })
      .on('payment.success', () => void ran.push('payment.success'))
      .on('payment.refunding', () => void ran.push('payment.refunding'));
    /** A refunding whose success was paid `ago` ms before now, and never delivered here: its answer. */
    const refunding = async (ago: number) => {
      const event = createEvent('payment.refunding', { paidAt: new Date(clock.now() - ago).toISOString() });
      const r = await receiver.handle(signedRequest(event, { secret }));
      return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
    };
    const edge = retentionMs - marginMs;
    const answers = {
      'paid before the retention': await refunding(retentionMs + SECOND),
      'paid a second inside the retention': await refunding(retentionMs - SECOND),
      'paid a second inside the margin': await refunding(edge + SECOND),
      'paid exactly at the margin': await refunding(edge),
      'paid a second past the margin': await refunding(edge - SECOND),
      'paid a minute ago': await refunding(MINUTE),
    };
    expect(answers).toEqual({
      'paid before the retention': '200 processed',
      'paid a second inside the retention': '200 processed',
      'paid a second inside the margin': '200 processed',
      'paid exactly at the margin': '409 held',
      'paid a second past the margin': '409 held',
      'paid a minute ago': '409 held',
    });
    // The success counted as run was not run: only the refundings that were let through ran.
    expect(ran).toEqual(['payment.refunding', 'payment.refunding', 'payment.refunding']);
  });
});

/*
 * The guard's own decisions, against a client made here (no service): what it asks, what it runs
 * first, what it holds and for what, and when it stops holding. Time is a manual clock throughout.
 */
const T0 = 1_700_000_000_000;
type Line = { level: string; fields: Partial<DeliveryReport> & { holds?: number; err?: unknown }; message: string };

/** The service's record of `event`'s transaction, paid a minute before T0, now `status`. */
const recordOf = (event: PaymentEvent, status: string, extra: Partial<TransactionRecord> = {}) =>
  serviceRecord(event, status, {
    paidAt: new Date(T0 - MINUTE).toISOString(),
    createdAt: new Date(T0 - 2 * MINUTE).toISOString(),
    ...extra,
  });

/** A client answering `answer` (a record, or an error to throw) for every reference; `asked` lists each call. */
function serviceOf(answer: () => TransactionRecord | Promise<TransactionRecord>, timeline?: RecordClient['transactions']['timeline']) {
  const asked: string[] = [];
  const client: RecordClient = {
    transactions: {
      retrieve: async () => (asked.push('retrieve'), answer()),
      verify: async () => (asked.push('verify'), answer()),
      ...(timeline && { timeline: async (r: string) => (asked.push('timeline'), timeline(r)) }),
    },
  };
  return { client, asked };
}

function guarded(options: Partial<ReceiverOptions> & { clock?: ManualClock; fail?: string[] } = {}) {
  const { fail = [], ...rest } = options;
  const clock = options.clock ?? manualClock(T0);
  const ran: string[] = [];
  const lines: Line[] = [];
  const receiver = createReceiver({
    secret,
    clock,
    store: memoryStore({ clock, warn: false }),
    budgetMs: 1_000,
    ordering: 'fetch',
    logger: (level, fields, message) => void lines.push({ level, fields: fields as Line['fields'], message }),
    ...rest,
  });
  for (const name of ['payment.success', 'payment.refunding', 'payment.refunded'] as const) {
    receiver.on(name, (e) => {
      ran.push(e.event);
      if (fail.includes(e.event)) throw new Error(`${e.event} failed`);
    });
  }
  const send = async (event: PaymentEvent) => {
    const r = await receiver.handle(signedRequest(event, { secret }));
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  /** The last outcome line's fields. */
  const last = () => lines.filter((l) => 'outcome' in l.fields).at(-1)!;
  return { clock, receiver, ran, lines, send, last };
}

describe("ordering: 'fetch' runs the missing earlier events from the service's record", () => {
  it('asks the service nothing when every earlier event ran, and nothing for an event with none before it', async () => {
    const paid = createEvent('payment.success');
    const { client, asked } = serviceOf(() => recordOf(paid, 'refunding'));
    const { send, ran } = guarded({ client });
    expect(await send(paid)).toBe('200 processed');
    expect(await send(createEvent('payment.refunding', { reference: paid.reference }))).toBe('200 processed');
    expect([ran, asked]).toEqual([['payment.success', 'payment.refunding'], []]);
  });

  it('holds an event behind the first earlier one that could not run, naming only what is still missing', async () => {
    const refunded = createEvent('payment.refunded');
    // The refunding's time is unknown without a timeline: the success runs, the refunding is waited for.
    const unknown = guarded({ client: serviceOf(() => recordOf(refunded, 'refunded')).client });
    expect(await unknown.send(refunded)).toBe('409 held');
    expect(unknown.ran).toEqual(['payment.success']);
    expect(unknown.last().fields.waitingFor).toEqual(['payment.refunding']);
    expect(String(unknown.last().fields.err)).toMatch(/shows no time for payment.refunding .*the client has no timeline\(\)/);
    // With its time, the refunding runs and fails: held for it, and the refunded does not run.
    const timeline = async (reference: string) => ({
      reference,
      events: [
        {
          eventType: 'refund_requested',
          status: 'refunding' as const,
          occurredAt: new Date(T0).toISOString(),
          errorCode: null,
          errorMessage: null,
        },
      ],
    });
    const failing = guarded({ client: serviceOf(() => recordOf(refunded, 'refunded'), timeline).client, fail: ['payment.refunding'] });
    expect(await failing.send(refunded)).toBe('409 held');
    expect(failing.ran).toEqual(['payment.success', 'payment.refunding']);
    expect(failing.last().fields.waitingFor).toEqual(['payment.refunding']);
  });

  it('answers mismatch, never counted as a hold, when the service does not know the transaction; runs it after 3 holds when the service cannot answer', async () => {
    const refunding = createEvent('payment.refunding');
    const answer = { status: 404 };
    const { send, ran, lines, last } = guarded({
      client: serviceOf(() => Promise.reject(Object.assign(new Error('the service said no'), answer))).client,
    });
    for (let i = 0; i < 5; i++) expect(await send(refunding)).toBe('200 mismatch');
    expect(String(last().fields.err)).toMatch(/the service said no/);
    answer.status = 500;
    for (let i = 0; i < 3; i++) expect(await send(refunding)).toBe('503 verify-unavailable');
    expect(ran).toEqual([]);
    expect(await send(refunding)).toBe('200 processed');
    expect(ran).toEqual(['payment.refunding']);
    const warned = lines.filter((l) => l.level === 'warn' && !('outcome' in l.fields));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.message).toMatch(/ran payment.refunding of \S+ after holding it 3 times for the service to catch up: /);
  });

  it('reads a client of your own that rejects with no error at all as the service not answering: 503 verify-unavailable', async () => {
    const { send, ran } = guarded({ client: serviceOf(() => Promise.reject(undefined)).client });
    expect(await send(createEvent('payment.refunding'))).toBe('503 verify-unavailable');
    expect(ran).toEqual([]);
  });

  it('waits at most half the budget for the earlier events, then holds; a reconcile waits as long as they take', async () => {
    const refunding = createEvent('payment.refunding');
    const clock = manualClock(T0);
    const slow = async () => (await clock.sleep(2_000), recordOf(refunding, 'refunding'));
    const { send, ran, last } = guarded({ clock, client: serviceOf(slow).client });
    const answer = send(refunding);
    await clock.advance(499);
    let answered = false;
    void answer.then(() => (answered = true));
    await clock.advance(0);
    expect(answered).toBe(false);
    await clock.advance(1);
    expect(await answer).toBe('409 held');
    expect(last().fields.waitingFor).toEqual(['payment.success']);
    await clock.advance(2_000);
    expect(ran).toEqual(['payment.success']);
    const reconciled = guarded({ clock, client: serviceOf(slow).client });
    const report = reconciled.receiver.dispatch(refunding);
    await clock.advance(0);
    await clock.advance(2_000);
    expect((await report).outcome).toBe('processed');
    expect(reconciled.ran).toEqual(['payment.success', 'payment.refunding']);
  });

  it("names what to return from accounts.resolve when an account's settings give no client", async () => {
    const { body, headers } = await (async () => {
      const request = signedRequest(createEvent('payment.refunding'), { secret });
      return { body: await request.text(), headers: Object.fromEntries(request.headers) };
    })();
    const { receiver, ran, last } = guarded({ secret: undefined, accounts: { resolve: () => ({ secret }) } });
    const r = await receiver.handle(new Request('https://platform.example/webhooks/epay/acct_7Q2', { method: 'POST', body, headers }));
    expect(r.status).toBe(503);
    expect(ran).toEqual([]);
    expect(last().fields).toMatchObject({ outcome: 'verify-unavailable', account: 'acct_7Q2' });
    expect(String(last().fields.err)).toMatch(
      /neither account acct_7Q2's settings from accounts.resolve nor the receiver have a client: return \{ secret, client: createClient\(\{ apiKey \}\) \} for it/,
    );
  });
});

describe("ordering: 'hold'", () => {
  const hold = (options: Parameters<typeof guarded>[0] = {}) => guarded({ ordering: 'hold', ...options });

  it('runs an event after 3 holds, and says at warn how many and what it waited for', async () => {
    const { send, ran, lines } = hold();
    const refunded = createEvent('payment.refunded');
    for (let i = 0; i < 3; i++) expect(await send(refunded)).toBe('409 held');
    expect(await send(refunded)).toBe('200 processed');
    expect(ran).toEqual(['payment.refunded']);
    const warned = lines.filter((l) => l.level === 'warn' && !('outcome' in l.fields));
    expect(warned.map((l) => l.fields)).toEqual([
      { reference: refunded.reference, event: 'payment.refunded', holds: 3, waitingFor: ['payment.success', 'payment.refunding'] },
    ]);
    expect(warned[0]!.message).toContain(
      `ran payment.refunded of ${refunded.reference} after holding it 3 times for payment.success, payment.refunding:`,
    );
  });

  it('waits only for earlier events someone handles, and lets an event it does not know through to be ignored', async () => {
    const clock = manualClock(T0);
    const ran: string[] = [];
    /** A receiver handling refundings, and every event with `any`: its answer to `event`. */
    const answer = async (any: boolean, event: object) => {
      const receiver = createReceiver({ secret, clock, store: memoryStore({ clock, warn: false }), ordering: 'hold', logger: () => {} });
      receiver.on('payment.refunding', (e) => void ran.push(e.event));
      if (any) receiver.onAny((e) => void ran.push(`any ${e.event}`));
      const r = await receiver.handle(signedRequest(event, { secret }));
      return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
    };
    expect(await answer(true, createEvent('payment.refunding'))).toBe('409 held');
    expect(await answer(false, createEvent('payment.refunding'))).toBe('200 processed');
    expect(ran).toEqual(['payment.refunding']);
    // An event the service does not define is answered as without the guard: nobody handles it.
    expect(await answer(true, { ...createEvent('payment.success'), event: 'payment.teleported' })).toBe('200 ignored');
    expect(ran).toEqual(['payment.refunding']);
  });

  it('holds when the store cannot count the holds (busy, or failing), never running the event on a count it could not keep', async () => {
    const clock = manualClock(T0);
    const inner = memoryStore({ clock, warn: false });
    const mode = { busy: true };
    const store: Store = {
      ...inner,
      claim: (key, leaseMs) =>
        key.startsWith('held:') && mode.busy
          ? Promise.resolve({ status: 'in-progress', leaseExpiresAt: T0 + 1_000 })
          : inner.claim(key, leaseMs),
      release: async (key, token) => {
        const released = await inner.release(key, token);
        if (key.startsWith('held:') && !mode.busy) throw new Error('connection reset');
        return released;
      },
    };
    const { send, ran } = hold({ clock, store });
    const refunding = createEvent('payment.refunding');
    for (let i = 0; i < 5; i++) expect(await send(refunding)).toBe('409 held');
    mode.busy = false;
    for (let i = 0; i < 5; i++) expect(await send(refunding)).toBe('409 held');
    expect(ran).toEqual([]);
  });

  it('answers 503 and runs nothing when the store cannot say which earlier events ran', async () => {
    const clock = manualClock(T0);
    const store: Store = { ...memoryStore({ clock, warn: false }), get: () => Promise.reject(new Error('connection reset')) };
    const { send, ran, last } = hold({ clock, store });
    expect(await send(createEvent('payment.refunding'))).toBe('503 store-unavailable');
    expect(String(last().fields.err)).toMatch(/connection reset/);
    expect(ran).toEqual([]);
  });
});
