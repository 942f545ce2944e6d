import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eraseDeliveries, type LedgerEntry } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import type { LedgerBounds } from './ledger-subject.js';

/** What the conformance suite shares with these cases: a ledger on the bounds asked for, and records. */
export interface LedgerCases {
  open(bounds?: LedgerBounds): Promise<Ledger>;
  entry(t: number, fields?: Partial<LedgerEntry>): LedgerEntry;
  idAt(t: number, i?: number): string;
}

/**
 * The part of the ledger contract a public endpoint needs (issue 30): refusals on a bound of their
 * own, the retention of open dead letters, and removal, down to one customer's records. Run by
 * `ledgerConformance` for every store.
 */
export function refusalsRetentionAndRemoval({ open, entry, idAt }: LedgerCases): void {
  describe('refusals, retention and removal', () => {
    // A refusal as the receiver writes it: an unsigned request, its body's hash and prefix only.
    const refusal = (t: number, fields: Partial<LedgerEntry> = {}): LedgerEntry => {
      const { body, bodyEncoding, attempt, secretIndex, dedupeKey, ...rest } = entry(t, {
        signature: 'invalid',
        outcome: 'unauthorized',
        status: 401,
      });
      return { ...rest, bodySha256: 'ab'.repeat(32), bodyPrefix: '{"event":"payment.success","reference":"ref\\u0000', ...fields };
    };

    it('keeps refusals on a bound of their own: a flood of them pushes out no accepted record and no open dead letter', async () => {
      const ledger = await open({ maxEntries: 10, retentionMs: 3_600_000, maxRefusals: 5 });
      const ref = `ref_${randomUUID()}`;
      const t = Date.now() - 10_000;
      const dead = entry(t, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      const accepted = Array.from({ length: 9 }, (_, i) => entry(t + 1 + i, { reference: ref }));
      await ledger.append([dead, ...accepted]);
      const flood = Array.from({ length: 50 }, (_, i) => refusal(t + 100 + i, { reference: ref }));
      for (let i = 0; i < flood.length; i += 10) await ledger.append(flood.slice(i, i + 10));
      const kept = await ledger.list({ reference: ref, limit: 1000 });
      const refusals = kept.filter((e) => e.signature === 'invalid');
      // Trimming may lag a batch behind, never more; the newest are the ones kept.
      expect(refusals.length).toBeGreaterThanOrEqual(5);
      expect(refusals.length).toBeLessThanOrEqual(15);
      expect(refusals.slice(0, 5).map((e) => e.id)).toEqual(
        flood
          .slice(-5)
          .map((e) => e.id)
          .reverse(),
      );
      expect(refusals[0]).toEqual(flood.at(-1));
      expect(kept.filter((e) => e.signature === 'valid').map((e) => e.id)).toEqual(
        [...accepted]
          .reverse()
          .map((e) => e.id)
          .concat(dead.id),
      );
      expect((await ledger.list({ deadLetters: 'open', limit: 1000 })).map((e) => e.id)).toContain(dead.id);
    });

    it('drops open dead letters past deadLetterRetentionMs, and refusals past retentionMs', async () => {
      const ledger = await open({ maxEntries: 10_000, retentionMs: 60_000, deadLetterRetentionMs: 120_000 });
      const ref = `ref_${randomUUID()}`;
      const now = Date.now();
      const deadLetter = (t: number) => entry(t, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      const expired = deadLetter(now - 180_000);
      const kept = deadLetter(now - 90_000);
      const oldRefusal = refusal(now - 90_000, { reference: ref });
      const fresh = refusal(now, { reference: ref });
      await ledger.append([expired, oldRefusal, kept, fresh]);
      await ledger.append([entry(now + 1, { reference: `${ref}-next` })]);
      expect((await ledger.list({ reference: ref })).map((e) => e.id)).toEqual([fresh.id, kept.id]);
      expect((await ledger.list({ deadLetters: 'open', limit: 1000 })).map((e) => e.id)).not.toContain(expired.id);
      expect(await ledger.get(expired.id)).toBeUndefined();
      expect(await ledger.get(oldRefusal.id)).toBeUndefined();
    });

    it('removes records whatever their state, open dead letters too, with their index entries', async () => {
      const ledger = await open();
      const ref = `ref_${randomUUID()}`;
      const t = Date.now();
      const plain = entry(t, { reference: ref, outcome: 'failed' });
      const dead = entry(t + 1, { reference: ref, outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      const refused = refusal(t + 2, { reference: ref });
      const other = entry(t + 3, { reference: `${ref}-other` });
      await ledger.append([plain, dead, refused, other]);
      expect(await ledger.remove([plain.id, dead.id, plain.id, idAt(1, 1)])).toBe(2);
      expect(await ledger.get(plain.id)).toBeUndefined();
      expect(await ledger.get(dead.id)).toBeUndefined();
      expect((await ledger.list({ reference: ref })).map((e) => e.id)).toEqual([refused.id]);
      expect((await ledger.list({ deadLetters: 'all', limit: 1000 })).map((e) => e.id)).not.toContain(dead.id);
      expect((await ledger.list({ outcome: 'failed', limit: 1000 })).map((e) => e.id)).not.toContain(plain.id);
      expect(await ledger.remove([plain.id])).toBe(0);
      expect(await ledger.remove([refused.id])).toBe(1);
      expect(await ledger.remove([])).toBe(0);
      expect((await ledger.list({ reference: ref })).length).toBe(0);
      expect(await ledger.get(other.id)).toEqual(other);
    });

    it('erases one customer by a whole email or phone, refusals naming it too, and one payment by reference (eraseDeliveries), open dead letters too', async () => {
      const ledger = await open();
      const t = Date.now();
      const [ada, abebe] = [`ada-${randomUUID()}@example.com`, `+251 9${String(t).slice(-8)}`];
      const bodyOf = (email: string | null, phone: string) =>
        JSON.stringify({ event: 'payment.success', reference: 'r', customer: { name: 'x', email, phone } });
      const hers = entry(t, { reference: `ref_${randomUUID()}`, body: bodyOf(ada.toUpperCase(), '251911000000') });
      const herDead = entry(t + 1, {
        reference: `ref_${randomUUID()}`,
        body: bodyOf(ada, '251911000000'),
        outcome: 'rejected',
        deadLetter: { reason: 'rejected', at: t },
      });
      const his = entry(t + 2, { reference: `ref_${randomUUID()}`, body: bodyOf(null, abebe) });
      const payment = `ref_${randomUUID()}`;
      const paid = [entry(t + 3, { reference: payment }), entry(t + 4, { reference: payment, outcome: 'duplicate' })];
      const other = entry(t + 5, { reference: `ref_${randomUUID()}`, body: bodyOf('someone@example.com', '251900000000') });
      // Refusals keep a prefix only: one naming her whole (any case); a longer address, and a longer number, holding theirs.
      const herRefusal = refusal(t + 6, { reference: `ref_${randomUUID()}`, bodyPrefix: `{"e":"${ada.toUpperCase()}"}` });
      const longer = refusal(t + 7, { reference: `ref_${randomUUID()}`, bodyPrefix: `{"e":"${ada}.au"}` });
      const longerPhone = refusal(t + 8, { reference: `ref_${randomUUID()}`, bodyPrefix: `{"p":"${abebe}1"}` });
      await ledger.append([hers, herDead, his, ...paid, other, herRefusal, longer, longerPhone]);
      // A part of an address or number names no one: refused, and nothing erased.
      for (const part of [{ email: '@' }, { email: '.com' }, { phone: '0911' }]) {
        await expect(eraseDeliveries(ledger, part)).rejects.toThrow(
          /^\[@payhook\/core\] eraseDeliveries: the (email|phone) must be one whole/,
        );
      }
      expect(await ledger.get(herRefusal.id)).toEqual(herRefusal);
      expect(await eraseDeliveries(ledger, { email: ada })).toEqual({ erased: 3 });
      expect(await eraseDeliveries(ledger, { phone: abebe.replace(/\D/g, '') })).toEqual({ erased: 1 });
      expect(await eraseDeliveries(ledger, { reference: payment })).toEqual({ erased: 2 });
      for (const gone of [hers, herDead, his, ...paid, herRefusal]) expect(await ledger.get(gone.id)).toBeUndefined();
      expect((await ledger.list({ deadLetters: 'open', limit: 1000 })).map((e) => e.id)).not.toContain(herDead.id);
      expect(await ledger.get(other.id)).toEqual(other);
      expect(await ledger.get(longer.id)).toEqual(longer);
      expect(await ledger.get(longerPhone.id)).toEqual(longerPhone);
    });
  });
}
