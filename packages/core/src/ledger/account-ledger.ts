import { isAccountName } from '../accounts/account-name.js';
import type { Ledger, LedgerEntry } from '../storage/ledger.js';

/**
 * The ledger as one merchant account sees it (a receiver with `accounts`): every query names the
 * account, so a page is full of its own records, and what comes back is checked again, in case a
 * ledger ignores the filter; another account's record reads as missing. Writes go through as they
 * are (they act on ids this view gave). Without an account, the ledger itself. `who` starts the
 * error for a name that is not an account's.
 *
 * @example
 * const mine = accountLedger(store.ledger!, 'acct_7Q2', '[@payhook/board]');
 * await mine.get(idOfAnotherAccount); // undefined
 */
export function accountLedger(ledger: Ledger, account: string | undefined, who: string): Ledger {
  if (account === undefined) return ledger;
  if (!isAccountName(account)) {
    throw new TypeError(
      `${who}: account must be an account's name (1 to 64 letters, digits, _ or -), or left out for every account's records; got ${JSON.stringify(account)}.`,
    );
  }
  const mine = (e: LedgerEntry | undefined) => (e?.account === account ? e : undefined);
  return {
    body: ledger.body,
    failedDoneTtlMs: ledger.failedDoneTtlMs,
    get: async (id) => mine(await ledger.get(id)),
    list: async (query = {}) => (await ledger.list({ ...query, account })).filter((e) => mine(e) !== undefined),
    append: (entries) => ledger.append(entries),
    update: (id, patch) => ledger.update(id, patch),
    remove: (ids) => ledger.remove(ids),
  };
}
