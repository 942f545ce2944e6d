import { describe, expect, it } from 'vitest';
import { eraseDeliveries, retryDeadLetters, type LedgerQuery, type Receiver } from '../../src/index.js';
import type { Ledger } from '../../src/storage/ledger.js';
import { accountLedger } from '../../src/ledger/account-ledger.js';
import { platformApp } from '../fixtures/platform-app.js';

/**
 * Issue 50: a platform's ledger tools act within one account. Two accounts whose payments share a
 * reference, a customer's email and phone: erasing or retrying for A never touches B's.
 */
async function twoAccounts() {
  const app = platformApp();
  // The same reference at both accounts, each refused (a dead letter); and one more of B's.
  for (const [account, reference] of [
    ['acct_A', 'ref_shared'],
    ['acct_B', 'ref_shared'],
    ['acct_B', 'ref_b_only'],
  ] as const) {
    expect(await app.pay(account, reference)).toBe('200 rejected');
  }
  await app.receiver.idle();
  const ledger = app.store.ledger!;
  return { ...app, ledger, ofB: await ledger.list({ account: 'acct_B' }) };
}

/** A ledger as one written before records named their account: it ignores the query's `account`. */
const older = (ledger: Ledger): Ledger =>
  new Proxy(ledger, {
    get(target, name) {
      if (name === 'list') return (q: LedgerQuery = {}) => target.list({ ...q, account: undefined });
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

describe("eraseDeliveries({ account }) erases that account's records only", () => {
  it.each([
    ['reference', { reference: 'ref_shared' }],
    ['email', { email: 'ADA@example.com' }],
    ['phone', { phone: '251911000111' }],
  ])("by %s: A's record goes, B's records stay whole", async (_, query) => {
    const { ledger, ofB } = await twoAccounts();
    expect(ofB).toHaveLength(2);
    expect(await eraseDeliveries(ledger, { ...query, account: 'acct_A' })).toEqual({ erased: 1 });
    expect(await ledger.list({ account: 'acct_A' })).toEqual([]);
    expect(await ledger.list()).toEqual(ofB);
    // Without an account: every account's records that match.
    const matching = 'reference' in query ? 1 : 2;
    expect(await eraseDeliveries(ledger, query)).toEqual({ erased: matching });
    expect(await ledger.list()).toHaveLength(2 - matching);
  });

  it("stays within the account on a ledger that ignores the query's account", async () => {
    const { ledger, ofB } = await twoAccounts();
    expect(await eraseDeliveries(older(ledger), { email: 'ada@example.com', account: 'acct_A' })).toEqual({ erased: 1 });
    expect(await eraseDeliveries(older(ledger), { reference: 'ref_shared', account: 'acct_A' })).toEqual({ erased: 0 });
    expect(await ledger.list()).toEqual(ofB);
  });
});

describe("retryDeadLetters(receiver, { account }) retries that account's dead letters only", () => {
  it("runs A's refused payment, forced and under A, and never B's with the same reference", async () => {
    const { receiver, ledger, state } = await twoAccounts();
    state.fixed = true;
    const retried = await retryDeadLetters(receiver, { account: 'acct_A' });
    // Forced: the store's record of A's event (under A's key) is done as rejected; unforced it would answer duplicate and run nothing.
    expect(retried.map((r) => [r.forced, r.closed, r.report.outcome, r.report.account])).toEqual([[true, true, 'processed', 'acct_A']]);
    expect(state.runs).toEqual([{ account: 'acct_A', reference: 'ref_shared' }]);
    expect(await retryDeadLetters(receiver, { account: 'acct_A' })).toEqual([]);
    const openOfB = await ledger.list({ deadLetters: 'open' });
    expect(openOfB.map((e) => [e.account, e.reference])).toEqual([
      ['acct_B', 'ref_b_only'],
      ['acct_B', 'ref_shared'],
    ]);

    // B's dead letter asked for by id as A's: answered as an id the ledger does not hold.
    const ofB = openOfB[1]!.id;
    await expect(retryDeadLetters(receiver, { account: 'acct_A', ids: [ofB] })).rejects.toThrow(
      `[@payhook/core] ${JSON.stringify(ofB)} is not a dead letter in the ledger`,
    );
    expect(state.runs).toHaveLength(1);

    // B's own retry runs B's, under B.
    const ofBRetried = await retryDeadLetters(receiver, { account: 'acct_B', ids: [ofB] });
    expect(ofBRetried.map((r) => [r.forced, r.report.outcome, r.report.account])).toEqual([[true, 'processed', 'acct_B']]);
    expect(state.runs).toEqual([
      { account: 'acct_A', reference: 'ref_shared' },
      { account: 'acct_B', reference: 'ref_shared' },
    ]);
  });

  it("stays within the account on a ledger that ignores the query's account", async () => {
    const { receiver, state } = await twoAccounts();
    state.fixed = true;
    const store = new Proxy(receiver.store, { get: (t, k) => (k === 'ledger' ? older(t.ledger!) : Reflect.get(t, k)) });
    const retried = await retryDeadLetters({ ...receiver, store } as Receiver, { account: 'acct_A' });
    expect(retried.map((r) => r.report.account)).toEqual(['acct_A']);
    expect(state.runs.map((r) => r.account)).toEqual(['acct_A']);
  });
});

describe('an account that is not a name', () => {
  it.each(['', '../acct_A', 'acct A', '\u0430cct_A', 'a'.repeat(65)])(
    '%j is refused by both, before anything is erased or run',
    async (account) => {
      const { receiver, ledger, state } = await twoAccounts();
      state.fixed = true;
      await expect(eraseDeliveries(ledger, { reference: 'ref_shared', account })).rejects.toThrow(
        /^\[@payhook\/core\] eraseDeliveries: account must be an account's name \(1 to 64 letters, digits, _ or -\)/,
      );
      await expect(retryDeadLetters(receiver, { account })).rejects.toThrow(
        /^\[@payhook\/core\] retryDeadLetters: account must be an account's name/,
      );
      expect(await ledger.list()).toHaveLength(3);
      expect(state.runs).toEqual([]);
    },
  );
});

describe("an account's view of the ledger", () => {
  it("reads another account's record and a missing one alike, as missing; writes go through to the ledger", async () => {
    const { ledger, ofB } = await twoAccounts();
    const mine = accountLedger(ledger, 'acct_B', '[@payhook/board]');
    expect(await mine.get(ofB[0]!.id)).toEqual(ofB[0]);
    const [ofA] = await ledger.list({ account: 'acct_A' });
    expect(await mine.get(ofA!.id)).toBeUndefined();
    expect(await mine.get('no-such-id')).toBeUndefined();
    await mine.update(ofB[0]!.id, { deadLetter: { ...ofB[0]!.deadLetter!, retriedBy: 'x' } });
    expect((await ledger.get(ofB[0]!.id))?.deadLetter?.retriedBy).toBe('x');
    await mine.append([{ ...ofB[0]!, id: `${ofB[0]!.id}~copy` }]);
    expect((await ledger.get(`${ofB[0]!.id}~copy`))?.account).toBe('acct_B');
    expect(await mine.remove([`${ofB[0]!.id}~copy`])).toBe(1);
  });
});
