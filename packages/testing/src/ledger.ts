/**
 * `@payhook/testing/ledger`: the ledger contract as a vitest suite, to run against a store's ledger.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryOutcome, LedgerEntry } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import { accountsInTheLedger } from './conformance/ledger-accounts.js';
import { refusalsRetentionAndRemoval } from './conformance/ledger-bounds.js';
import type { LedgerBounds, LedgerUnderTest } from './conformance/ledger-subject.js';

export type { LedgerBounds, LedgerUnderTest } from './conformance/ledger-subject.js';

let made = 0;

/**
 * The ledger contract, written once and run against every store's ledger: append and read back,
 * updates, every query filter, pages, newest first, the bounds that keep open dead letters, the
 * refusals' bound of their own, the open dead letters' retention, removal, and the merchant
 * accounts' records kept apart.
 *
 * @example
 * import { ledgerConformance } from '@payhook/testing/ledger';
 * ledgerConformance('memory', { make: async (bounds) => ({ ledger: memoryStore({ ledger: bounds }).ledger! }) });
 */
export function ledgerConformance(name: string, subject: LedgerUnderTest): void {
  describe(`ledger conformance: ${name}`, () => {
    const closers: (() => Promise<void>)[] = [];
    const open = async (bounds: LedgerBounds = { maxEntries: 10_000, retentionMs: 3_600_000 }) => {
      const { ledger, close } = await subject.make(bounds);
      if (close) closers.push(close);
      return ledger;
    };
    afterAll(async () => {
      for (const close of closers) await close();
    });

    // Ids that sort by time, as the receiver's do; unique per run.
    const run = randomUUID().slice(0, 6);
    const idAt = (t: number, i = 0) => `${t.toString(36).padStart(11, '0')}-${i.toString(36).padStart(4, '0')}-${run}${made++}`;
    const entry = (t: number, fields: Partial<LedgerEntry> = {}): LedgerEntry => ({
      id: idAt(t),
      receivedAt: t,
      source: 'webhook',
      reference: `ref_${run}`,
      event: 'payment.success',
      dedupeKey: `sandbox:ref_${run}:payment.success`,
      outcome: 'processed',
      status: 200,
      durationMs: 3,
      attempt: 1,
      signature: 'valid',
      secretIndex: 0,
      signatureHeader: 'sha256=00',
      body: '{"event":"payment.success"}',
      bodyEncoding: 'utf8',
      ...fields,
    });

    describe('records', () => {
      let ledger: Ledger;
      const t0 = Date.now() - 60_000;
      const ref = `ref_${randomUUID()}`;
      const written: LedgerEntry[] = [];
      beforeAll(async () => {
        ledger = await open();
        const outcomes: DeliveryOutcome[] = ['processed', 'duplicate', 'in-progress', 'failed', 'accepted', 'unauthorized'];
        for (let i = 0; i < 12; i++) {
          const outcome = outcomes[i % outcomes.length]!;
          written.push(
            entry(t0 + i * 1000, {
              reference: i < 6 ? ref : `${ref}-other`,
              outcome,
              event: i % 2 ? 'payment.refunded' : 'payment.success',
              attempt: i + 1,
            }),
          );
        }
        await ledger.append(written.slice(0, 5));
        await ledger.append(written.slice(5));
      });

      it('reads a record back as it was written, every field', async () => {
        for (const e of [written[0]!, written[7]!]) expect(await ledger.get(e.id)).toEqual(e);
        expect(await ledger.get(idAt(t0, 999))).toBeUndefined();
      });

      it('lists newest first, filtered by reference', async () => {
        const mine = await ledger.list({ reference: ref });
        expect(mine.map((e) => e.id)).toEqual(
          written
            .slice(0, 6)
            .map((e) => e.id)
            .reverse(),
        );
      });

      it('filters by event, outcome and time range, all at once', async () => {
        const refs = [ref, `${ref}-other`];
        const byEvent = (await ledger.list({ event: 'payment.refunded', limit: 1000 })).filter((e) => refs.includes(e.reference!));
        expect(byEvent.map((e) => e.id)).toEqual(
          written
            .filter((e) => e.event === 'payment.refunded')
            .map((e) => e.id)
            .reverse(),
        );
        const failed = await ledger.list({ reference: ref, outcome: 'failed' });
        expect(failed.map((e) => e.id)).toEqual([written[3]!.id]);
        const window = await ledger.list({ reference: `${ref}-other`, since: t0 + 7000, until: t0 + 10_000 });
        expect(window.map((e) => e.receivedAt)).toEqual([t0 + 9000, t0 + 8000, t0 + 7000]);
      });

      it('pages with limit and before, without gaps or repeats', async () => {
        const pages: string[] = [];
        let before: string | undefined;
        for (;;) {
          const page = await ledger.list({ reference: `${ref}-other`, limit: 4, before });
          pages.push(...page.map((e) => e.id));
          if (page.length < 4) break;
          before = page[page.length - 1]!.id;
        }
        expect(pages).toEqual(
          written
            .slice(6)
            .map((e) => e.id)
            .reverse(),
        );
      });

      it('refuses a page size out of range, with a message that names the limit', async () => {
        await expect(ledger.list({ limit: 0 })).rejects.toThrow(/limit/);
        await expect(ledger.list({ limit: 1001 })).rejects.toThrow(/1000/);
      });
    });

    describe('updates and dead letters', () => {
      it('adds a late outcome, and the outcome filter finds the record by it', async () => {
        const ledger = await open();
        const ref = `ref_${randomUUID()}`;
        const e = entry(Date.now(), { reference: ref, outcome: 'accepted', status: 202 });
        await ledger.append([e]);
        await ledger.update(e.id, { late: { outcome: 'failed', durationMs: 9100, error: 'boom' } });
        expect(await ledger.get(e.id)).toEqual({ ...e, late: { outcome: 'failed', durationMs: 9100, error: 'boom' } });
        expect((await ledger.list({ reference: ref, outcome: 'failed' })).map((x) => x.id)).toEqual([e.id]);
        expect((await ledger.list({ reference: ref, outcome: 'accepted' })).map((x) => x.id)).toEqual([e.id]);
        // A record that is gone: nothing to update, and no error.
        await expect(ledger.update(idAt(1, 1), { late: { outcome: 'processed', durationMs: 1 } })).resolves.toBeUndefined();
      });

      it('lists open dead letters until a retry answers them', async () => {
        const ledger = await open();
        const ref = `ref_${randomUUID()}`;
        const now = Date.now();
        const a = entry(now, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: now } });
        const b = entry(now + 1, { reference: ref, outcome: 'accepted', status: 202 });
        const c = entry(now + 2, { reference: ref });
        await ledger.append([a, b, c]);
        await ledger.update(b.id, { late: { outcome: 'failed', durationMs: 1 }, deadLetter: { reason: 'late-failed', at: now + 5 } });
        const open1 = await ledger.list({ reference: ref, deadLetters: 'open' });
        expect(open1.map((e) => e.id)).toEqual([b.id, a.id]);
        await ledger.update(a.id, { deadLetter: { reason: 'rejected', at: now, retriedBy: c.id } });
        expect((await ledger.list({ reference: ref, deadLetters: 'open' })).map((e) => e.id)).toEqual([b.id]);
        expect((await ledger.list({ reference: ref, deadLetters: 'all' })).map((e) => e.id)).toEqual([b.id, a.id]);
        // Without a reference too: the dead letters are found across the ledger.
        expect((await ledger.list({ deadLetters: 'open', limit: 1000 })).map((e) => e.id)).toContain(b.id);
      });
    });

    describe('bounds', () => {
      it('keeps at most maxEntries records, the newest, and every open dead letter', async () => {
        const ledger = await open({ maxEntries: 20, retentionMs: 3_600_000 });
        const ref = `ref_${randomUUID()}`;
        const t = Date.now();
        const dead = entry(t, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
        const rest = Array.from({ length: 59 }, (_, i) => entry(t + 1 + i, { reference: ref }));
        await ledger.append([dead]);
        for (let i = 0; i < rest.length; i += 10) await ledger.append(rest.slice(i, i + 10));
        const kept = await ledger.list({ reference: ref, limit: 1000 });
        // Trimming may lag a batch behind, never more.
        expect(kept.length).toBeGreaterThanOrEqual(21);
        expect(kept.length).toBeLessThanOrEqual(31);
        expect(kept.slice(0, 20).map((e) => e.id)).toEqual(
          rest
            .slice(-20)
            .map((e) => e.id)
            .reverse(),
        );
        expect(kept.at(-1)!.id).toBe(dead.id);
        expect(await ledger.get(dead.id)).toBeDefined();
        expect(await ledger.get(rest[0]!.id)).toBeUndefined();
      });

      it('drops records older than retentionMs, but not open dead letters', async () => {
        const ledger = await open({ maxEntries: 10_000, retentionMs: 60_000 });
        const ref = `ref_${randomUUID()}`;
        const old = Date.now() - 120_000;
        const gone = entry(old, { reference: ref });
        const dead = entry(old + 1, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: old } });
        const fresh = entry(Date.now(), { reference: ref });
        await ledger.append([gone, dead]);
        await ledger.append([fresh]);
        expect((await ledger.list({ reference: ref })).map((e) => e.id)).toEqual([fresh.id, dead.id]);
        expect(await ledger.get(gone.id)).toBeUndefined();
      });
    });

    refusalsRetentionAndRemoval({ open, entry, idAt });
    accountsInTheLedger({ open, entry, idAt });
  });
}
