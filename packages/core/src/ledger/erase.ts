import { bytesOf, MAX_LEDGER_PAGE, type Ledger, type LedgerEntry } from '../storage/ledger.js';
import { cut, MAX_NAME } from '../observing/ledger-record.js';
import { accountLedger } from './account-ledger.js';

const NAME = '[@payhook/core]';

/** Whose deliveries to erase: a payment's reference, or a customer's email or phone (matched in the kept bodies). */
export interface EraseQuery {
  reference?: string;
  email?: string;
  phone?: string;
  /** Only this merchant account's records (a receiver with `accounts`): another account's, whatever they name, are left whole. */
  account?: string;
}

/**
 * Erase a payment's or a customer's deliveries from the ledger, whatever their state (open dead
 * letters too): by `reference`, every record of it; by `email` or `phone`, every record whose kept
 * body names that customer (`customer.email`, case aside; `customer.phone`, digits only). Records
 * kept as a hash (`body: 'hash'`) or refusals keep no customer data beyond their reference.
 * Pages through the whole ledger for an email or a phone (the account's records only, with `account`).
 *
 * @example
 * const { erased } = await eraseDeliveries(store.ledger!, { email: 'ada@example.com', account: 'acct_7Q2' });
 */
export async function eraseDeliveries(ledger: Ledger, query: EraseQuery): Promise<{ erased: number }> {
  const { reference, email, phone, account } = query;
  const wanted = [reference, email, phone].filter((x) => x !== undefined);
  if (wanted.length === 0 || wanted.some((x) => typeof x !== 'string' || x.trim() === '')) {
    throw new TypeError(
      `${NAME} eraseDeliveries needs a reference, an email or a phone, each a non-empty string; got ${JSON.stringify(query)}.`,
    );
  }
  const scoped = accountLedger(ledger, account, `${NAME} eraseDeliveries`);
  const emailKey = email?.trim().toLowerCase();
  const phoneKey = phone === undefined ? undefined : digits(phone);
  if (phoneKey === '') throw new TypeError(`${NAME} eraseDeliveries: the phone ${JSON.stringify(phone)} holds no digits.`);
  const names = (e: LedgerEntry) => {
    if (emailKey === undefined && phoneKey === undefined) return true;
    const customer = customerOf(e);
    if (emailKey !== undefined && (customer.email?.trim().toLowerCase() === emailKey || e.bodyPrefix?.toLowerCase().includes(emailKey)))
      return true;
    return phoneKey !== undefined && customer.phone !== undefined && digits(customer.phone) === phoneKey;
  };
  // By reference only: that index; otherwise every record, in pages. The reference as the receiver stored it (cut to its bound).
  const byReference = reference !== undefined && email === undefined && phone === undefined;
  let erased = 0;
  let before: string | undefined;
  for (;;) {
    const page = await scoped.list({ ...(byReference && { reference: cut(reference, MAX_NAME) }), limit: MAX_LEDGER_PAGE, before });
    const ids = page
      .filter((e) => (reference !== undefined && e.reference === cut(reference, MAX_NAME)) || (!byReference && names(e)))
      .map((e) => e.id);
    if (ids.length > 0) erased += await scoped.remove(ids);
    if (page.length < MAX_LEDGER_PAGE) return { erased };
    before = page[page.length - 1]!.id;
  }
}

const digits = (s: string) => s.replace(/\D/g, '');

/** The customer a kept body names, if it is a JSON event. */
function customerOf(e: LedgerEntry): { email?: string; phone?: string } {
  const bytes = bytesOf(e);
  if (bytes === undefined) return {};
  try {
    const value: unknown = JSON.parse(typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes));
    const customer = (value as { customer?: unknown } | null)?.customer as { email?: unknown; phone?: unknown } | null | undefined;
    return {
      ...(typeof customer?.email === 'string' && { email: customer.email }),
      ...(typeof customer?.phone === 'string' && { phone: customer.phone }),
    };
  } catch {
    return {};
  }
}
