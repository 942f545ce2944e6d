import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import { bodyFields } from './payment.js';

/** Records read at most to find one page for a merchant reference: ten ledger pages. */
export const MERCHANT_SCAN = 10_000;
const PAGE = 1000;

/**
 * The merchant reference a kept body names. The ledger indexes the service's reference, not the
 * merchant's, so this filter reads bodies: records kept as a hash, and refusals, name none.
 */
export function merchantReferenceOf(e: LedgerEntry): string | undefined {
  // Most bodies of a long scan are not the one: a body that does not name the field is not parsed.
  if (e.body === undefined || e.bodyEncoding === 'base64' || !e.body.includes('merchantReference')) return undefined;
  const read = bodyFields(e);
  return 'fields' in read && typeof read.fields.merchantReference === 'string' ? read.fields.merchantReference : undefined;
}

/**
 * Up to `want` records whose body names `merchant`, newest first, reading at most MERCHANT_SCAN
 * records past `query.before`; `next` is where the next page starts, when the scan stopped early.
 */
export async function findByMerchant(ledger: Ledger, query: LedgerQuery, merchant: string, want: number) {
  const rows: LedgerEntry[] = [];
  let before = query.before;
  let scanned = 0;
  while (scanned < MERCHANT_SCAN) {
    const page = await ledger.list({ ...query, before, limit: PAGE });
    scanned += page.length;
    for (const e of page) {
      if (merchantReferenceOf(e) !== merchant) continue;
      rows.push(e);
      if (rows.length === want) return { rows, scanned, next: e.id };
    }
    if (page.length < PAGE) return { rows, scanned, next: undefined };
    before = page.at(-1)!.id;
  }
  return { rows, scanned, next: before };
}
