import { bytesOf, MAX_LEDGER_PAGE, type Ledger, type LedgerEntry } from '../storage/ledger.js';
import { cut, MAX_NAME } from './ledger-record.js';
import { accountLedger } from './account-ledger.js';
import { emailKey, phoneKey, prefixNamesEmail, prefixNamesPhone, samePhone } from './customer-key.js';

const NAME = '[@payhook/core]';

/** Whose deliveries to erase: a payment's reference, or a customer's email or phone (matched whole in the kept bodies). */
export interface EraseQuery {
  /** Every delivery of this payment (its reference). */
  reference?: string;
  /** One whole address, like `ada@example.com`: matched whole, case aside. A part of one (`@`, `.com`) is refused. */
  email?: string;
  /** One whole number of 7 to 15 digits, like `+251 911 234 567`: its digits matched whole. A part of one is refused. */
  phone?: string;
  /** Only this merchant account's records (a receiver with `accounts`): another account's, whatever they name, are left whole. */
  account?: string;
}

/** eraseDeliveries (./erase.ts), loaded at its first call. */
export async function eraseDeliveries(ledger: Ledger, query: EraseQuery): Promise<{ erased: number }> {
  const { reference, email, phone, account } = query;
  const wanted = [reference, email, phone].filter((x) => x !== undefined);
  if (wanted.length === 0 || wanted.some((x) => typeof x !== 'string' || x.trim() === '')) {
    throw new TypeError(
      `${NAME} eraseDeliveries needs a reference, an email or a phone, each a non-empty string; got ${JSON.stringify(query)}.`,
    );
  }
  const scoped = accountLedger(ledger, account, `${NAME} eraseDeliveries`);
  const byEmail = email === undefined ? undefined : emailKey(email);
  const byPhone = phone === undefined ? undefined : phoneKey(phone);
  const names = (e: LedgerEntry) => {
    if (byEmail === undefined && byPhone === undefined) return true;
    const customer = customerOf(e);
    const prefix = e.bodyPrefix ?? '';
    if (byEmail !== undefined && (customer.email?.trim().toLowerCase() === byEmail || prefixNamesEmail(prefix, byEmail))) return true;
    if (byPhone === undefined) return false;
    return (customer.phone !== undefined && samePhone(customer.phone, byPhone)) || prefixNamesPhone(prefix, byPhone);
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
