import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import {
  createReceiver,
  memoryStore,
  NonRetriableError,
  retryDeadLetters,
  type LedgerEntry,
  type PaymentEvent,
  type Receiver,
  type RecordClient,
} from '../../src/index.js';
import type { TransactionRecord } from '../../src/protocol/api-schema.js';
import { recordOf as serviceRecord } from '../fixtures/service-record.js';

/*
 * Replays and dead-letter retries that must run nothing, or run as the service says: records a
 * replay refuses, reconciled records read again from the service (ledger/replay-check.ts), and
 * when a retry is forced. Records are written by hand where only a forged or odd one gets there.
 */
const secret = 'whsec_ledger_replay';
const T0 = 1_700_000_000_000;

function setup(options: { client?: RecordClient; body?: 'keep' | 'hash'; fail?: (e: PaymentEvent) => Error | undefined } = {}) {
  const clock = manualClock(T0);
  const store = memoryStore({ clock, ledger: { body: options.body ?? 'keep' }, warn: false });
  const ran: string[] = [];
  const receiver = createReceiver({ secret, store, clock, budgetMs: 200, leaseMs: 1_000, client: options.client, logger: () => {} });
  receiver.on('payment.success', (e) => {
    const error = options.fail?.(e);
    if (error) throw error;
    ran.push(e.reference);
  });
  const ledger = store.ledger!;
  const send = async (request: Request) => (await receiver.handle(request)).status;
  /** The records of `reference`, newest first, once written. */
  const recordsOf = async (reference: string) => (await receiver.idle(), ledger.list({ reference }));
  return { clock, store, ledger, receiver, ran, send, recordsOf };
}

/** A reconciled record (never signed) of `event`, as a reconcile that failed writes it. */
const reconciled = (id: string, body: string, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id,
  receivedAt: T0,
  source: 'reconcile',
  signature: 'not-checked',
  outcome: 'failed',
  status: 500,
  durationMs: 1,
  body,
  bodyEncoding: 'utf8',
  deadLetter: { reason: 'reconcile-failed', at: T0 },
  ...extra,
});
const why = (report: { error?: unknown }) => (report.error as Error).message;

describe('a replay runs nothing the ledger alone asserts', () => {
  it('refuses a delivery answered 401, and one refused before its signature was checked, saying why', async () => {
    const { ledger, receiver, ran, send, recordsOf } = setup();
    const event = createEvent('payment.success');
    expect(await send(signedRequest(event, { secret: 'whsec_wrong' }))).toBe(401);
    const [refused] = await recordsOf(event.reference);
    const report = await receiver.replay(refused!.id, { force: true });
    expect(report).toMatchObject({ outcome: 'unauthorized', reference: event.reference, event: 'payment.success', source: 'replay' });
    expect(why(report)).toMatch(
      /^\[@payhook\/core\] delivery \S+ was not replayed: its signature was invalid \(answered 401 unauthorized\), and a delivery payhook did not verify never runs a handler/,
    );
    const unchecked = {
      ...refused!,
      id: `${refused!.id}~unchecked`,
      signature: 'not-checked' as const,
      status: 413,
      outcome: 'too-large' as never,
    };
    await ledger.append([{ ...unchecked, body: JSON.stringify(event), bodyEncoding: 'utf8' }]);
    const again = await receiver.replay(unchecked.id);
    expect(again.outcome).toBe('unauthorized');
    expect(why(again)).toMatch(/was not replayed: it was refused before its signature was checked \(answered 413 too-large\)/);
    expect(ran).toEqual([]);
  });

  it('says a replay that ran nothing kept no body, naming the delivery to replay instead; an unreadable body is malformed', async () => {
    const { ledger, receiver } = setup();
    await ledger.append([reconciled('r1', JSON.stringify(createEvent('payment.success')))]);
    const first = await receiver.replay('r1');
    expect(first.outcome).toBe('verify-unavailable');
    await expect(receiver.replay(first.deliveryId!)).rejects.toMatchObject({
      message: `[@payhook/core] delivery ${first.deliveryId} has no body to replay (a replay that ran nothing keeps none): replay r1, the delivery it replayed.`,
    });
    await ledger.append([reconciled('r2', 'not an event')]);
    const malformed = await receiver.replay('r2');
    expect(malformed).toMatchObject({ outcome: 'malformed', source: 'replay' });
    expect(why(malformed)).toMatch(/^\[@payhook\/core\] delivery r2 holds no event payhook can read; it cannot be replayed/);
    expect((malformed.error as Error).cause).toBeInstanceOf(Error);
    // A record with no body that replayed nothing: the same words, without a delivery to replay instead.
    await ledger.append([reconciled('r3', '', { body: undefined })]);
    await expect(receiver.replay('r3')).rejects.toMatchObject({
      message: '[@payhook/core] delivery r3 has no body to replay (a replay that ran nothing keeps none).',
    });
    await expect(receiver.replay('nope')).rejects.toMatchObject({
      message: expect.stringMatching(/^\[@payhook\/core\] no delivery "nope"/),
    });
  });
});

describe('a record kept as a hash cannot be replayed, and the error says to keep bodies', () => {
  const keepBodies =
    /^\[@payhook\/core\] delivery \S+ was recorded without its body \(ledger body: 'hash'\), so it cannot be replayed\. Keep bodies \(ledger: \{ body: 'keep' \}\) to replay deliveries\.$/;

  it('in a ledger that keeps bodies now, for a record written when it kept hashes', async () => {
    const { ledger, receiver } = setup();
    await ledger.append([reconciled('h1', '', { body: undefined, bodySha256: 'ab'.repeat(32), signature: 'valid', source: 'webhook' })]);
    await expect(receiver.replay('h1')).rejects.toMatchObject({ message: expect.stringMatching(keepBodies) });
  });

  it('in a hash ledger, for a replay that ran nothing too', async () => {
    const { ledger, receiver } = setup({ body: 'hash' });
    await ledger.append([reconciled('h2', JSON.stringify(createEvent('payment.success')))]);
    const first = await receiver.replay('h2');
    expect(first.outcome).toBe('verify-unavailable');
    await expect(receiver.replay(first.deliveryId!)).rejects.toMatchObject({ message: expect.stringMatching(keepBodies) });
  });
});

describe('a reconciled record is read again from the service', () => {
  const event = createEvent('payment.success', { reference: 'ref_reread' });
  const recordOf = (extra: Partial<TransactionRecord> = {}) => serviceRecord(event, 'completed', extra);
  const answering = (answer: () => Promise<TransactionRecord>): RecordClient => ({ transactions: { verify: answer, retrieve: answer } });
  const replayed = async (client: RecordClient, body: object = event) => {
    const { ledger, receiver, ran } = setup({ client });
    await ledger.append([reconciled('r1', JSON.stringify(body))]);
    return { report: await receiver.replay('r1'), ran };
  };

  it('names why it refused: the service does not back it, or could not be asked (try again later), with the cause', async () => {
    const failed = await replayed(answering(async () => recordOf({ status: 'failed' })));
    expect(failed.report.outcome).toBe('mismatch');
    expect(why(failed.report)).toMatch(
      /was not replayed: the service does not back it \(\[@payhook\/core\] the service says ref_reread is failed/,
    );
    expect(String((failed.report.error as Error).cause)).toMatch(/the service says ref_reread is failed/);
    const down = await replayed(answering(() => Promise.reject(Object.assign(new Error('bad gateway'), { status: 502 }))));
    expect(down.report.outcome).toBe('verify-unavailable');
    expect(why(down.report)).toMatch(/was not replayed: the service could not be asked for its record \(try again later\) \(bad gateway\)/);
    expect([...failed.ran, ...down.ran]).toEqual([]);
  });

  it('refuses a record no event can be made from, and names every field the ledger changed', async () => {
    const bare = await replayed(answering(async () => recordOf({ merchantReference: null })));
    expect(bare.report.outcome).toBe('mismatch');
    expect(why(bare.report)).toMatch(
      /was not replayed: \[@payhook\/core\] eventFromRecord: the record of ref_reread has no merchantReference/,
    );
    const forged = await replayed(
      answering(async () => recordOf()),
      { ...event, amount: '1.00', currency: 'USD' },
    );
    expect(why(forged.report)).toContain(
      `(amount "1.00" stored, "${event.amount}" at the service; currency "USD" stored, "ETB" at the service)`,
    );
    expect([...bare.ran, ...forged.ran]).toEqual([]);
  });
});

describe('retrying dead letters forces only an event the store holds done as rejected', () => {
  /** A done event's record, copied as an open dead letter whose dedupe key is `key`. */
  const asDeadLetter = (e: LedgerEntry, key: string | undefined): LedgerEntry => ({
    ...e,
    id: `${e.id}~dead`,
    dedupeKey: key,
    deadLetter: { reason: 'rejected', at: T0 },
  });

  it('does not force an event processed since its dead letter, nor one the store no longer holds: neither runs twice', async () => {
    const clock = manualClock(T0);
    const store = memoryStore({ clock, ledger: true, warn: false });
    const ran: string[] = [];
    const state = { fixed: false };
    const gone = createEvent('payment.success');
    const receiver = createReceiver({ secret, store, clock, budgetMs: 200, leaseMs: 1_000, logger: () => {} }).on(
      'payment.success',
      async (e) => {
        if (state.fixed) return void ran.push(e.reference);
        if (e.reference === gone.reference) throw new NonRetriableError('unknown order');
        await clock.sleep(300);
        throw new Error('down');
      },
    );
    const late = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(late, { secret }));
    await clock.advance(300);
    expect((await answer).status).toBe(202);
    state.fixed = true;
    expect((await receiver.handle(signedRequest(late, { secret }))).status).toBe(200);
    await receiver.idle();
    const [retried] = await retryDeadLetters(receiver);
    expect(retried).toMatchObject({ forced: false, closed: true, report: { outcome: 'duplicate' } });
    expect(ran).toEqual([late.reference]);
    // Rejected, but asked through a store that holds no record of it: not forced, so it answers duplicate.
    state.fixed = false;
    expect((await receiver.handle(signedRequest(gone, { secret }))).status).toBe(200);
    await receiver.idle();
    state.fixed = true;
    const forgetful = { ...memoryStore({ clock, warn: false }), ledger: store.ledger };
    const [unforced] = await retryDeadLetters({ ...receiver, store: forgetful } as Receiver);
    expect(unforced).toMatchObject({ forced: false, report: { outcome: 'duplicate', reference: gone.reference } });
    expect(ran).toEqual([late.reference]);
  });

  it("never forces on a dedupe key the ledger record alone asserts: another event's, rejected", async () => {
    const { receiver, ran, send, recordsOf } = setup({
      fail: (e) => (e.reference === 'ref_rejected' ? new NonRetriableError('no') : undefined),
    });
    const rejected = createEvent('payment.success', { reference: 'ref_rejected' });
    const paid = createEvent('payment.success');
    await send(signedRequest(rejected, { secret }));
    await send(signedRequest(paid, { secret }));
    const [ofRejected] = await recordsOf(rejected.reference);
    const [ofPaid] = await recordsOf(paid.reference);
    await receiver.store.ledger!.append([asDeadLetter(ofPaid!, ofRejected!.dedupeKey)]);
    const [r] = await retryDeadLetters(receiver, { ids: [`${ofPaid!.id}~dead`] });
    expect(r).toMatchObject({ forced: false, report: { outcome: 'duplicate' } });
    expect(ran).toEqual([paid.reference]);
  });

  it('retries up to 1000 open dead letters unless given a limit, and says why one kept as a hash cannot be', async () => {
    const { ledger, receiver } = setup();
    const body = JSON.stringify(createEvent('payment.success'));
    await ledger.append(Array.from({ length: 51 }, (_, i) => reconciled(`d${String(i).padStart(3, '0')}`, body)));
    expect(await retryDeadLetters(receiver, { limit: 2 })).toHaveLength(2);
    expect(await retryDeadLetters(receiver)).toHaveLength(51);
    const hashed = setup({ body: 'hash', fail: () => new NonRetriableError('no') });
    await hashed.send(signedRequest(createEvent('payment.success'), { secret }));
    await hashed.receiver.idle();
    await expect(retryDeadLetters(hashed.receiver)).rejects.toThrow(/was recorded without its body \(ledger body: 'hash'\)/);
  });
});
