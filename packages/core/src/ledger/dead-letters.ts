import type { Receiver } from '../contracts/receiving.js';
import type { DeadLetterRetry } from './retry-letters.js';

export type { DeadLetterRetry } from './retry-letters.js';

/**
 * Retry dead letters through the receiver, oldest first: each is replayed as `receiver.replay`
 * does it (a webhook's stored bytes checked against its signature again; a reconciled event read
 * again from the service through the receiver's `client`; a refused delivery never runs),
 * forced when its event is done as rejected (a handler threw NonRetriableError), not forced
 * otherwise, so an event that was processed since answers `duplicate` and runs no handler twice.
 * A dead letter whose replay settles is closed (`deadLetter.retriedBy` names the replay).
 * With `account`, only that account's dead letters: another's id is answered as one not in the ledger.
 * The retry's code (./retry-letters.ts) is loaded at the first call (issue 54).
 *
 * @example
 * for (const r of await retryDeadLetters(receiver, { account: 'acct_7Q2' })) console.log(r.id, r.report.outcome);
 */
export async function retryDeadLetters(
  receiver: Receiver,
  options: { ids?: readonly string[]; limit?: number; account?: string } = {},
): Promise<DeadLetterRetry[]> {
  const { retryDeadLetters: retry } = await import('./retry-letters.js');
  return retry(receiver, options);
}
