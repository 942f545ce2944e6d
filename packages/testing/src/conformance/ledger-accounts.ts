import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import type { LedgerCases } from './ledger-bounds.js';

/**
 * The ledger's merchant accounts (issue 50, platforms): one receiver records deliveries for many
 * accounts, which may share references, events and dedupe keys. A query naming an account gets that
 * account's records only (never another's, never those with no account); a query naming none gets
 * every record. Run by `ledgerConformance` for every store.
 */
export function accountsInTheLedger({ open, entry }: LedgerCases): void {
  describe('merchant accounts', () => {
    // Unique per run, so that a listing by account alone reads this run's records only.
    const tag = randomUUID().slice(0, 8);
    const [A, B] = [`acct_a_${tag}`, `acct_b_${tag}`];
    const ids = (entries: readonly LedgerEntry[]) => entries.map((e) => e.id);
    const newestFirst = (entries: readonly LedgerEntry[]) => ids(entries).reverse();

    describe('records of two accounts alike but for the account', () => {
      let ledger: Ledger;
      const ref = `ref_${randomUUID()}`;
      const t0 = Date.now() - 60_000;
      // A, B, none, A, B, none, ...: the same reference, event and dedupe key throughout.
      const written = Array.from({ length: 9 }, (_, i) =>
        entry(t0 + i * 1000, {
          reference: ref,
          dedupeKey: `sandbox:${ref}:payment.success`,
          ...(i % 3 < 2 && { account: i % 3 === 0 ? A : B }),
        }),
      );
      // Names close to A's (a longer one, another case): a filter that is not an exact match shows them.
      const nearA = [
        entry(t0 + 9500, { reference: ref, account: `${A}-2` }),
        entry(t0 + 9600, { reference: ref, account: A.toUpperCase() }),
      ];
      const of = (account: string | undefined) => written.filter((e) => e.account === account);
      beforeAll(async () => {
        ledger = await open();
        await ledger.append(written.slice(0, 4));
        await ledger.append([...written.slice(4), ...nearA]);
      });

      it('lists by account only that account’s records, and without one every record', async () => {
        expect(ids(await ledger.list({ account: A }))).toEqual(newestFirst(of(A)));
        expect(ids(await ledger.list({ account: B }))).toEqual(newestFirst(of(B)));
        expect(of(A)).toHaveLength(3);
        const all = newestFirst([...written, ...nearA].sort((x, y) => x.receivedAt - y.receivedAt));
        expect(ids(await ledger.list({ reference: ref }))).toEqual(all);
        expect(ids((await ledger.list({ limit: 1000 })).filter((e) => e.reference === ref))).toEqual(all);
        // With the reference, event and dedupe key they share, still one account's only.
        expect(ids(await ledger.list({ account: B, reference: ref, event: 'payment.success' }))).toEqual(newestFirst(of(B)));
        expect(ids(await ledger.list({ account: `${A}-2` }))).toEqual([nearA[0]!.id]);
      });

      it('reads the account back with the record, and none where it had none', async () => {
        const [a, none] = [written[0]!, written[2]!];
        expect(await ledger.get(a.id)).toEqual(a);
        expect((await ledger.get(a.id))?.account).toBe(A);
        expect(await ledger.get(none.id)).toEqual(none);
        expect((await ledger.get(none.id))?.account).toBeUndefined();
      });

      it('lists nothing for an account with no records', async () => {
        expect(await ledger.list({ account: `acct_none_${tag}` })).toEqual([]);
        expect(await ledger.list({ account: `acct_none_${tag}`, reference: ref, limit: 1000 })).toEqual([]);
      });
    });

    describe('the account with every other filter', () => {
      let ledger: Ledger;
      const [ref, ref2] = [`ref_${randomUUID()}`, `ref_${randomUUID()}`];
      const t0 = Date.now() - 120_000;
      const written: LedgerEntry[] = [];
      beforeAll(async () => {
        ledger = await open();
        for (let i = 0; i < 24; i++) {
          const t = t0 + i * 1000;
          const dead = i % 4 === 2; // 2, 6, 10, ...: a dead letter, on each account in turn
          written.push(
            entry(t, {
              ...(i % 3 < 2 && { account: i % 3 === 0 ? A : B }),
              reference: i < 12 ? ref : ref2,
              event: i % 2 ? 'payment.refunded' : 'payment.success',
              ...(i % 4 === 1 && { outcome: 'failed', status: 500 }),
              ...(i % 4 === 3 && { outcome: 'accepted', status: 202 }),
              ...(dead && { outcome: 'rejected', status: 200, deadLetter: { reason: 'rejected', at: t } }),
            }),
          );
        }
        await ledger.append(written.slice(0, 10));
        await ledger.append(written.slice(10));
        // A late failure on accepted records of both accounts, and a retry that answers one of A's dead letters.
        for (const i of [3, 7]) await ledger.update(written[i]!.id, { late: { outcome: 'failed', durationMs: 5 } });
        written[3] = { ...written[3]!, late: { outcome: 'failed', durationMs: 5 } };
        written[7] = { ...written[7]!, late: { outcome: 'failed', durationMs: 5 } };
        const retried = { reason: 'rejected', at: t0 + 6000, retriedBy: written[9]!.id } as const;
        await ledger.update(written[6]!.id, { deadLetter: retried });
        written[6] = { ...written[6]!, deadLetter: retried };
      });
      // What a query must return, worked out here from the records written.
      const expected = (account: string, keep: (e: LedgerEntry, i: number) => boolean) =>
        newestFirst(written.filter((e, i) => e.account === account && keep(e, i)));
      const list = async (q: LedgerQuery) => ids(await ledger.list({ limit: 1000, ...q }));

      it('with the reference, the event and the outcome (the late one too)', async () => {
        expect(await list({ account: A, reference: ref2 })).toEqual(expected(A, (e) => e.reference === ref2));
        expect(await list({ account: B, event: 'payment.refunded' })).toEqual(expected(B, (e) => e.event === 'payment.refunded'));
        const failedA = expected(A, (e) => e.outcome === 'failed' || e.late?.outcome === 'failed');
        expect(failedA).toEqual(ids([written[21]!, written[9]!, written[3]!]));
        expect(await list({ account: A, outcome: 'failed' })).toEqual(failedA);
        expect(await list({ account: B, outcome: 'failed' })).toEqual(
          expected(B, (e) => e.outcome === 'failed' || e.late?.outcome === 'failed'),
        );
        expect(await list({ account: A, reference: ref, outcome: 'processed' })).toEqual(ids([written[0]!]));
      });

      it('with the dead letters, open and all', async () => {
        // A's dead letters are 6 (retried) and 18; B's 10 and 22; none's 2 and 14.
        expect(await list({ account: A, deadLetters: 'open' })).toEqual(ids([written[18]!]));
        expect(await list({ account: A, deadLetters: 'all' })).toEqual(ids([written[18]!, written[6]!]));
        expect(await list({ account: B, deadLetters: 'open' })).toEqual(ids([written[22]!, written[10]!]));
        expect(await list({ account: B, deadLetters: 'all', reference: ref2 })).toEqual(ids([written[22]!]));
        // Without an account, every account's and those with none.
        const open = await list({ deadLetters: 'open' });
        for (const i of [2, 10, 14, 18, 22]) expect(open).toContain(written[i]!.id);
        expect(open).not.toContain(written[6]!.id);
      });

      it('with since and until', async () => {
        const [since, until] = [t0 + 5000, t0 + 17_000];
        const inWindow = (e: LedgerEntry) => e.receivedAt >= since && e.receivedAt < until;
        expect(expected(A, inWindow)).toEqual(ids([written[15]!, written[12]!, written[9]!, written[6]!]));
        expect(await list({ account: A, since, until })).toEqual(expected(A, inWindow));
        expect(await list({ account: B, since })).toEqual(expected(B, (e) => e.receivedAt >= since));
        expect(await list({ account: B, until, outcome: 'failed' })).toEqual(ids([written[13]!, written[7]!, written[1]!]));
      });

      it('pages with limit and before, without gaps, repeats or other accounts', async () => {
        for (const [account, limit] of [
          [A, 3],
          [B, 2],
          [A, 1],
        ] as const) {
          const pages: string[][] = [];
          let before: string | undefined;
          for (;;) {
            const page = ids(await ledger.list({ account, limit, before }));
            if (page.length > 0) pages.push(page);
            if (page.length < limit) break;
            before = page[page.length - 1];
          }
          const all = expected(account, () => true);
          expect(all).toHaveLength(8);
          expect(pages.flat()).toEqual(all);
          expect(pages[0]).toEqual(all.slice(0, limit));
        }
        // Paged with the other filters too: the first page and the one after it.
        const page1 = await list({ account: B, reference: ref2, limit: 2 });
        expect(page1).toEqual(ids([written[22]!, written[19]!]));
        expect(await list({ account: B, reference: ref2, limit: 2, before: page1[1] })).toEqual(ids([written[16]!, written[13]!]));
        expect(await list({ account: A, deadLetters: 'all', before: written[18]!.id })).toEqual(ids([written[6]!]));
      });
    });

    it('removes one account’s records and leaves the other’s, and keeps each account’s newest past a bound', async () => {
      const ledger = await open({ maxEntries: 10, retentionMs: 3_600_000 });
      const ref = `ref_${randomUUID()}`;
      const t = Date.now() - 10_000;
      const dead = entry(t, { account: A, reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      const rest = Array.from({ length: 40 }, (_, i) => entry(t + 1 + i, { account: i % 2 ? B : A, reference: ref }));
      await ledger.append([dead]);
      for (let i = 0; i < rest.length; i += 10) await ledger.append(rest.slice(i, i + 10));
      const a = await ledger.list({ account: A, limit: 1000 });
      // 10 kept of both accounts, 5 of them A's; trimming may lag a batch behind, never more. A's open dead letter stays.
      expect(a.length).toBeGreaterThanOrEqual(6);
      expect(a.length).toBeLessThanOrEqual(11);
      expect(ids(a.slice(0, 5))).toEqual(newestFirst(rest.filter((e) => e.account === A).slice(-5)));
      expect(a.at(-1)!.id).toBe(dead.id);
      expect(a.every((e) => e.account === A)).toBe(true);
      const removed = await ledger.remove(ids(a));
      expect(removed).toBe(a.length);
      expect(await ledger.list({ account: A, limit: 1000 })).toEqual([]);
      expect(await ledger.list({ account: A, deadLetters: 'open', limit: 1000 })).toEqual([]);
      const b = await ledger.list({ account: B, limit: 1000 });
      expect(ids(b.slice(0, 5))).toEqual(newestFirst(rest.filter((e) => e.account === B).slice(-5)));
      expect(ids(await ledger.list({ reference: ref, limit: 1000 }))).toEqual(ids(b));
    });
  });
}
