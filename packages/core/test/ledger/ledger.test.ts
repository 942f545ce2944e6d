import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, NonRetriableError, retryDeadLetters, type LedgerEntry, type Receiver } from '../../src/index.js';
import type { Ledger } from '../../src/store.js';
import { transactionRecordSchema, type TransactionRecord } from '../../src/protocol/api-schema.js';
import { eventFromRecord } from '../../src/protocol/record-event.js';

const secret = 'whsec_ledger';
const quiet = { info() {}, warn() {}, error() {} };
/** The ledger writes after the answer, in a later turn: once the receiver's writer is idle, it holds `count` records that match `query`. */
async function holds(receiver: Receiver, ledger: Ledger, count: number, query: Parameters<Ledger['list']>[0] = {}) {
  await receiver.idle();
  expect(await ledger.list(query)).toHaveLength(count);
}

function setup(ledger: { body?: 'keep' | 'hash' } | true = true, budgetMs = 200) {
  const clock = manualClock(1_700_000_000_000);
  const store = memoryStore({ now: clock.now, ledger });
  const receiver = createReceiver({ secret, store, clock, budgetMs, leaseMs: 1_000, logger: quiet });
  const send = async (request: Request) => {
    const r = await receiver.handle(request);
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  return { clock, store, ledger: store.ledger!, receiver, send };
}

describe('the ledger', () => {
  it('records one entry per delivery attempt: what came, the signature verdict, what was answered', async () => {
    const { ledger, receiver, send } = setup();
    let runs = 0;
    receiver.on('payment.success', () => void (runs += 1));
    const event = createEvent('payment.success', { reference: 'L1' });
    expect(await send(signedRequest(event, { secret }))).toBe('200 processed');
    expect(await send(signedRequest(event, { secret }))).toBe('200 duplicate');
    expect(await send(signedRequest(event, { secret: 'whsec_other' }))).toBe('401 unauthorized');
    expect(await send(new Request('http://x/', { method: 'GET' }))).toBe('405 method-not-allowed');
    await holds(receiver, ledger, 4);
    const all = await ledger.list();
    expect(all.map((e) => e.outcome)).toEqual(['method-not-allowed', 'unauthorized', 'duplicate', 'processed']);
    const [, bad, dup, first] = all as [LedgerEntry, LedgerEntry, LedgerEntry, LedgerEntry];
    expect(first).toMatchObject({
      source: 'webhook',
      reference: 'L1',
      event: 'payment.success',
      status: 200,
      attempt: 1,
      signature: 'valid',
      secretIndex: 0,
      bodyEncoding: 'utf8',
    });
    expect(JSON.parse(first.body!)).toEqual(event);
    expect(first.signatureHeader).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(dup).toMatchObject({ outcome: 'duplicate', signature: 'valid' });
    expect(bad).toMatchObject({ signature: 'invalid', status: 401 });
    // A refusal keeps no body: its SHA-256 and a printable prefix only.
    expect(bad.body).toBeUndefined();
    expect(bad.bodySha256).toBe(createHash('sha256').update(first.body!).digest('hex'));
    expect(bad.bodyPrefix).toBe(first.body!.slice(0, 64));
    expect(runs).toBe(1);
    expect((await ledger.list({ reference: 'L1' })).length).toBe(3);
  });

  it('names the record in the report, and adds the late outcome of a handler that outlived the budget', async () => {
    const { clock, ledger, receiver } = setup();
    const reports: { deliveryId?: string; outcome: string; late?: boolean }[] = [];
    const logged = createReceiver({
      secret,
      store: receiver.store,
      clock,
      budgetMs: 200,
      leaseMs: 1_000,
      logger: (_level, fields) => void reports.push(fields as never),
    });
    logged.on('payment.success', async () => {
      await clock.sleep(500);
      throw new Error('the warehouse is down');
    });
    const answer = logged.handle(signedRequest(createEvent('payment.success', { reference: 'L2' }), { secret }));
    await clock.advance(200);
    expect((await answer).status).toBe(202);
    await clock.advance(300);
    // The late outcome is an update of the record, written after it.
    await logged.idle();
    const entry = (await ledger.list({ reference: 'L2' })).find((e) => e.late);
    expect(entry).toMatchObject({
      outcome: 'accepted',
      status: 202,
      late: { outcome: 'failed', error: 'the warehouse is down' },
      deadLetter: { reason: 'late-failed' },
    });
    expect(entry!.late!.durationMs).toBe(500);
    expect(reports.filter((r) => r.deliveryId === entry!.id).map((r) => `${r.outcome}${r.late ? ' late' : ''}`)).toEqual([
      'accepted',
      'failed late',
    ]);
    expect((await ledger.list({ outcome: 'failed' })).map((e) => e.id)).toEqual([entry!.id]);
  });

  it('sends NonRetriableError to the dead letters; a replay answers duplicate unless forced, and forcing is recorded', async () => {
    const { ledger, receiver, send } = setup();
    let fixed = false;
    const ran: string[] = [];
    receiver.on('payment.success', (e, ctx) => {
      ran.push(`${ctx.source}:${fixed}`);
      if (!fixed) throw new NonRetriableError('unknown order');
    });
    expect(await send(signedRequest(createEvent('payment.success', { reference: 'L3' }), { secret }))).toBe('200 rejected');
    await holds(receiver, ledger, 1, { deadLetters: 'open' });
    const [dead] = await ledger.list({ deadLetters: 'open' });
    expect(dead).toMatchObject({ reference: 'L3', outcome: 'rejected', error: 'unknown order', deadLetter: { reason: 'rejected' } });

    expect((await receiver.replay(dead!.id)).outcome).toBe('duplicate');
    fixed = true;
    const forced = await receiver.replay(dead!.id, { force: true });
    expect(forced.outcome).toBe('processed');
    expect(await ledger.get(forced.deliveryId!)).toMatchObject({
      source: 'replay',
      replayOf: dead!.id,
      forced: true,
      signature: 'valid',
      outcome: 'processed',
    });
    expect(ran).toEqual(['webhook:false', 'replay:true']);
    await expect(receiver.replay('nope')).rejects.toThrow(/no delivery "nope" in the ledger/);
  });

  it('retries dead letters: forced where the event is done as failed, each processed once, then closed', async () => {
    const { clock, ledger, receiver, send } = setup();
    let fixed = false;
    const ran = new Map<string, number>();
    receiver.on('payment.success', async (e) => {
      if (e.reference === 'late' && !fixed) await clock.sleep(300);
      if (!fixed) throw e.reference === 'late' ? new Error('down') : new NonRetriableError('no such order');
      ran.set(e.reference, (ran.get(e.reference) ?? 0) + 1);
    });
    for (const reference of ['D1', 'D2'])
      expect(await send(signedRequest(createEvent('payment.success', { reference }), { secret }))).toBe('200 rejected');
    const late = send(signedRequest(createEvent('payment.success', { reference: 'late' }), { secret }));
    await clock.advance(300);
    expect(await late).toBe('202 accepted');
    await holds(receiver, ledger, 3, { deadLetters: 'open' });
    expect((await ledger.list({ deadLetters: 'open' })).map((e) => e.reference)).toEqual(['late', 'D2', 'D1']);

    fixed = true;
    const results = await retryDeadLetters(receiver);
    expect(results.map((r) => [r.report.reference, r.report.outcome, r.forced, r.closed])).toEqual([
      ['D1', 'processed', true, true],
      ['D2', 'processed', true, true],
      ['late', 'processed', false, true],
    ]);
    expect(Object.fromEntries(ran)).toEqual({ D1: 1, D2: 1, late: 1 });
    expect(await ledger.list({ deadLetters: 'open' })).toEqual([]);
    expect((await retryDeadLetters(receiver)).length).toBe(0);
    await expect(retryDeadLetters(receiver, { ids: [results[0]!.id] })).rejects.toThrow(/already retried by/);
  });

  it('checks the signature again on the stored bytes: after the secret is rotated away, a replay is refused', async () => {
    const { store, ledger, receiver, send } = setup();
    receiver.on('payment.success', () => {});
    expect(await send(signedRequest(createEvent('payment.success', { reference: 'L4' }), { secret }))).toBe('200 processed');
    await holds(receiver, ledger, 1, { reference: 'L4' });
    const [entry] = await ledger.list({ reference: 'L4' });
    const rotated = createReceiver({ secret: 'whsec_new', store, logger: quiet }).on('payment.success', () => {});
    const r = await rotated.replay(entry!.id, { force: true });
    expect(r.outcome).toBe('unauthorized');
    expect(await ledger.get(r.deliveryId!)).toMatchObject({ signature: 'invalid', replayOf: entry!.id, forced: true });
  });

  it('in hash mode keeps the SHA-256 of the body and no bytes, and says why such a delivery cannot be replayed', async () => {
    const { ledger, receiver, send } = setup({ body: 'hash' });
    receiver.on('payment.success', () => {});
    const request = signedRequest(createEvent('payment.success', { reference: 'L5' }), { secret });
    const bytes = new Uint8Array(await request.clone().arrayBuffer());
    await send(request);
    await holds(receiver, ledger, 1);
    const [entry] = await ledger.list();
    const expected = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex');
    expect(entry).toMatchObject({ bodySha256: expected });
    expect(entry!.body).toBeUndefined();
    await expect(receiver.replay(entry!.id)).rejects.toThrow(/recorded without its body \(ledger body: 'hash'\)/);
  });

  it('records a reconcile that could not run as a dead letter; never signed, it is not retried without a client to read it again', async () => {
    const { ledger, receiver } = setup();
    let fixed = false;
    let runs = 0;
    receiver.on('payment.refunded', () => {
      if (!fixed) throw new Error('db down');
      runs += 1;
    });
    const event = createEvent('payment.refunded', { reference: 'L6' });
    expect((await receiver.dispatch(event)).outcome).toBe('failed');
    await holds(receiver, ledger, 1, { deadLetters: 'open' });
    const [dead] = await ledger.list({ deadLetters: 'open' });
    expect(dead).toMatchObject({ source: 'reconcile', signature: 'not-checked', deadLetter: { reason: 'reconcile-failed' } });
    fixed = true;
    // Its JSON is only what the ledger holds: a replay reads the event from the service (test/ledger/replay-trust.test.ts).
    const [retry] = await retryDeadLetters(receiver);
    expect(retry).toMatchObject({ forced: false, closed: false, report: { outcome: 'verify-unavailable', source: 'replay' } });
    expect((retry!.report.error as Error).message).toMatch(
      /^\[@payhook\/core\] delivery \S+ was not replayed: .*no client\. Configure one/,
    );
    expect(runs).toBe(0);
    expect(await ledger.list({ deadLetters: 'open' })).toHaveLength(1);
  });

  it('costs no delivery when the ledger fails: the answer stands and the log says what is missing', async () => {
    const errors: string[] = [];
    const broken: Ledger = {
      body: 'keep',
      append: async () => Promise.reject(new Error('disk full')),
      update: async () => {},
      get: async () => undefined,
      list: async () => [],
      remove: async () => 0,
    };
    const store = { ...memoryStore(), ledger: broken };
    const receiver = createReceiver({
      secret,
      store,
      logger: { info() {}, warn() {}, error: (_f: unknown, m: string) => void errors.push(m) },
    }).on('payment.success', () => {});
    const r = await receiver.handle(signedRequest(createEvent('payment.success'), { secret }));
    expect(r.status).toBe(200);
    await receiver.idle();
    expect(errors).toEqual([expect.stringMatching(/the ledger could not record 1 deliveries; they are missing from it/)]);
  });

  it('says how to get a ledger when replay is asked of a receiver without one', async () => {
    const receiver = createReceiver({ secret, logger: quiet });
    await expect(receiver.replay('x')).rejects.toThrow(/replay needs a ledger: create the store with a `ledger` option/);
    await expect(retryDeadLetters(receiver)).rejects.toThrow(/dead letters live in the ledger/);
  });
});

/*
 * A reconcile's event was never signed: the ledger holds only what was written to the store, so a
 * replay reads it again from the service (replay-check.ts) and runs nothing the service's record
 * does not back. Without Redis or Postgres: a memory ledger and a client that answers `record`.
 */
describe("replaying a reconciled event: the service's record must back each field the ledger holds", () => {
  const record = transactionRecordSchema.parse({
    reference: 'ref_replay_check',
    merchantReference: 'order_7',
    status: 'refunded',
    amount: '100.00',
    currencyCode: 'ETB',
    mode: 'sandbox',
    createdAt: '2026-08-13T11:30:00.000Z',
  });
  const event = eventFromRecord(record, 'payment.refunded');

  /** A refund a reconcile recovered whose handler failed (a dead letter), then fixed, replayed from a copy with `tamper` in its body. */
  async function deadLetter(tamper: Record<string, unknown>, answer: TransactionRecord = record) {
    const { clock, store, ledger } = setup();
    const asked: string[] = [];
    const answers = async (reference: string) => {
      asked.push(reference);
      return answer;
    };
    const client = { transactions: { verify: answers, retrieve: answers } };
    let fixed = false;
    const ran: unknown[] = [];
    const receiver = createReceiver({ secret, store, clock, client, logger: quiet }).on('payment.refunded', (e) => {
      if (!fixed) throw new Error('db down');
      ran.push(e);
    });
    expect((await receiver.dispatch(event)).outcome).toBe('failed');
    await holds(receiver, ledger, 1, { deadLetters: 'open' });
    const [dead] = await ledger.list({ deadLetters: 'open' });
    expect(dead).toMatchObject({ source: 'reconcile', signature: 'not-checked' });
    fixed = true;
    // Whoever can write to the store writes the record again, its body changed (the ledger's update takes no body).
    const forged = { ...dead!, id: `${dead!.id}~forged`, body: JSON.stringify({ ...event, ...tamper }) };
    await ledger.append([forged]);
    const report = await receiver.replay(forged.id);
    return { report, why: String((report.error as Error | undefined)?.message), ran, asked };
  }

  it('runs the stored event when the service backs it, as the service makes it', async () => {
    const { report, ran, asked } = await deadLetter({});
    expect(report).toMatchObject({ outcome: 'processed', source: 'replay' });
    expect(ran).toEqual([event]);
    expect(asked).toEqual([record.reference]);
  });

  it.each([
    ['amount', { amount: '999999.00' }, 'amount "999999.00" stored, "100.00" at the service'],
    ['currency', { currency: 'USD' }, 'currency "USD" stored, "ETB" at the service'],
    ['merchantReference', { merchantReference: 'order_8' }, 'merchantReference "order_8" stored, "order_7" at the service'],
  ])('refuses a stored %s the service does not back: mismatch, naming both, and nothing runs', async (_, tamper, names) => {
    const { report, why, ran } = await deadLetter(tamper);
    expect(report).toMatchObject({ outcome: 'mismatch', source: 'replay', reference: record.reference });
    expect(why).toMatch(/^\[@payhook\/core\] delivery \S+ was not replayed: it does not agree with the service's record/);
    expect(why).toContain(names);
    expect(ran).toEqual([]);
  });

  it.each([
    ['mode', { mode: 'live' }, /the service answered the record of ref_replay_check \(sandbox\), which is not acted on/],
    ['reference', { reference: 'ref_forged' }, /asked for ref_forged \(sandbox\), the service answered the record of ref_replay_check/],
  ])('refuses a stored %s that is not the record the service answers: nothing runs', async (_, tamper, why) => {
    const replayed = await deadLetter(tamper);
    expect(replayed.report.outcome).toBe('verify-unavailable');
    expect(replayed.why).toMatch(why);
    expect(replayed.ran).toEqual([]);
  });

  it("refuses an event the service's record does not stand for (its status), and an event the service does not define", async () => {
    const behind = await deadLetter({}, { ...record, status: 'completed' });
    expect(behind.report.outcome).toBe('verify-unavailable');
    expect(behind.why).toMatch(/the service's record of ref_replay_check still says completed, behind the payment.refunded/);
    const unknown = await deadLetter({ event: 'payment.teleported' });
    expect(unknown.report.outcome).toBe('mismatch');
    expect(unknown.why).toMatch(/it holds the event "payment.teleported", which the service does not define/);
    expect(unknown.asked).toEqual([]);
    expect([...behind.ran, ...unknown.ran]).toEqual([]);
  });
});
