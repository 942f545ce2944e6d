import { isAccountName } from '@payhook/core/adapter';
import type { BoardViewer } from './options.js';

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
