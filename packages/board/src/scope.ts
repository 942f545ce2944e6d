import type { LedgerEntry } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import type { BoardViewer } from './options.js';

import { isAccountName } from '@payhook/core/adapter';

// An account's name as core reads it from a request (1 to 64 letters, digits, `_` or `-`): anything else names none.
export { isAccountName };

/**
 * The viewer `authorize` answered, checked: its `account` absent or `undefined` is the platform
 * view (every record), a name is that account's view only. Anything else is a bug in the app's
 * authorize, so it throws, and the board answers that request 500 with the error in the
 * receiver's log: a scope the board cannot read must never widen to every account's records, nor
 * narrow silently to an empty board that looks like "no deliveries".
 */
export function viewerOf(answer: BoardViewer, accounts: boolean): BoardViewer {
  const account: unknown = answer.account;
  if (account === undefined) return answer;
  if (!isAccountName(account)) {
    const shown = typeof account === 'string' ? JSON.stringify(account.slice(0, 80)) : String(account);
    throw new TypeError(
      `[@payhook/board] authorize answered { user, account: ${shown} }: account must be the account's name (1 to 64 letters, digits, _ or -), as the receiver's accounts.resolve knows it; leave it out only for the platform's own staff, who see every account.`,
    );
  }
  if (!accounts) {
    throw new TypeError(
      `[@payhook/board] authorize answered account ${account}, but the receiver serves one account (it has a \`secret\`, not \`accounts\`): its records name no account, so this viewer would see none. Answer { user } without account, or create the receiver with \`accounts\`.`,
    );
  }
  return answer;
}

/**
 * The ledger as one account's viewer may see it: every query asks for that account (so a page is
 * full of its own records), and what comes back is checked again, in case a store ignores the
 * filter; another account's record reads as missing. Without an account, the ledger itself.
 */
export function scopedLedger(ledger: Ledger, account: string | undefined): Ledger {
  if (account === undefined) return ledger;
  const mine = (e: LedgerEntry) => e.account === account;
  const readOnly = async (): Promise<never> => {
    throw new Error(`[@payhook/board] the ledger seen by account ${account}'s viewer only reads and erases.`);
  };
  return {
    body: ledger.body,
    failedDoneTtlMs: ledger.failedDoneTtlMs,
    get: async (id) => {
      const e = await ledger.get(id);
      return e !== undefined && mine(e) ? e : undefined;
    },
    list: async (query = {}) => (await ledger.list({ ...query, account })).filter(mine),
    // Only eraseDeliveries removes through it, and only ids this ledger listed: the account's own.
    remove: (ids) => ledger.remove(ids),
    append: readOnly,
    update: readOnly,
  };
}
