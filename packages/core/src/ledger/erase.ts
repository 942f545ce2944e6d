import type { Ledger } from '../storage/ledger.js';
import type { EraseQuery } from './erase-records.js';

export type { EraseQuery } from './erase-records.js';

/**
 * Erase a payment's or a customer's deliveries from the ledger, whatever their state (open dead
 * letters too): by `reference`, every record of it; by `email` or `phone`, every record whose kept
 * body names that customer (`customer.email`, case aside; `customer.phone`, digits only), and every
 * refusal whose kept prefix names the address or number whole (never as a part of a longer one).
 * A value that is not a whole address or number is refused before anything is read: `.com` or `@`
 * would otherwise name every refusal. Records kept as a hash (`body: 'hash'`) keep no customer data.
 * Pages through the whole ledger for an email or a phone (the account's records only, with `account`).
 * The erasure's code (./erase-records.ts) is loaded at the first call (issue 54).
 *
 * @example
 * const { erased } = await eraseDeliveries(store.ledger!, { email: 'ada@example.com', account: 'acct_7Q2' });
 */
export async function eraseDeliveries(ledger: Ledger, query: EraseQuery): Promise<{ erased: number }> {
  const { eraseDeliveries: erase } = await import('./erase-records.js');
  return erase(ledger, query);
}
