import { queuedKey } from '../routing/handoff.js';
import { bytesOf, type LedgerEntry } from '../storage/ledger.js';
import { Malformed, parseEvent } from '../steps/parse.js';
import { SETTLED } from '../protocol/outcomes.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { Receiver } from '../contracts/receiving.js';
import { accountKeyPrefix, isAccountName } from '../accounts/account-name.js';
import { accountLedger } from './account-ledger.js';

/** What `retryDeadLetters` reports of one dead letter: its replay, and whether that closed it. */
export interface DeadLetterRetry {
  /** The dead letter's record. */
  id: string;
  /** What its replay answered. */
  report: DeliveryReport;
  /** Whether the event was done (rejected) and so had to be forced. */
  forced: boolean;
  /** True when the dead letter is answered: the event is done now, or its replay went to the dead letters in its place. */
  closed: boolean;
}

const NAME = '[@payhook/core]';

/** retryDeadLetters (./dead-letters.ts), loaded at its first call. */
export async function retryDeadLetters(
  receiver: Receiver,
  options: { ids?: readonly string[]; limit?: number; account?: string } = {},
): Promise<DeadLetterRetry[]> {
  const ledger = receiver.store.ledger;
  if (!ledger) throw new Error(`${NAME} dead letters live in the ledger: create the store with a \`ledger\` option to keep them.`);
  const scoped = accountLedger(ledger, options.account, `${NAME} retryDeadLetters`);
  const letters = options.ids
    ? await Promise.all(options.ids.map(async (id) => openLetter(id, await scoped.get(id))))
    : (await scoped.list({ deadLetters: 'open', limit: options.limit ?? 1000 })).reverse();
  const results: DeadLetterRetry[] = [];
  for (const letter of letters) {
    const key = await keyOf(receiver, letter);
    const record = key === undefined ? undefined : await receiver.store.get(key);
    const forced = record?.state === 'done' && record.outcome === 'rejected';
    const report = await receiver.replay(letter.id, { force: forced });
    // Settled (OUTCOMES): the event's handlers will not run again, so the dead letter needs nothing more.
    const closed = SETTLED.has(report.outcome) && report.deliveryId !== undefined;
    if (closed) await ledger.update(letter.id, { deadLetter: { ...letter.deadLetter!, retriedBy: report.deliveryId } });
    results.push({ id: letter.id, report, forced, closed });
  }
  return results;
}

/**
 * The letter's dedupe key, if its body names that event: forcing a replay rests on the store's
 * record of the event the replay will run (whose bytes are checked again, or which the service
 * vouches for), never on a key the ledger record alone asserts. An account's record replays as
 * that account's, under its keys: the event's key after `@<account>:`, as the pipeline makes them
 * (accounts/account-name.ts, accountKeyPrefix).
 */
async function keyOf(receiver: Receiver, letter: LedgerEntry): Promise<string | undefined> {
  let event: Awaited<ReturnType<typeof parseEvent>> | undefined;
  try {
    const bytes = letter.dedupeKey === undefined ? undefined : bytesOf(letter);
    event = bytes === undefined ? undefined : await parseEvent(bytes);
  } catch {} // base64 that is not: the replay says so
  if (event === undefined || event instanceof Malformed) return undefined;
  if (letter.account !== undefined && !isAccountName(letter.account)) return undefined;
  const key = (letter.account === undefined ? '' : accountKeyPrefix(letter.account)) + receiver.dedupeKey(event);
  return letter.dedupeKey === key || letter.dedupeKey === queuedKey(key) ? letter.dedupeKey : undefined;
}

function openLetter(id: string, entry: LedgerEntry | undefined): LedgerEntry {
  if (entry?.deadLetter === undefined)
    throw new Error(`${NAME} ${JSON.stringify(id)} is not a dead letter in the ledger; list them with \`payhook dead-letters list\`.`);
  if (entry.deadLetter.retriedBy !== undefined)
    throw new Error(`${NAME} dead letter ${id} was already retried by ${entry.deadLetter.retriedBy}.`);
  return entry;
}
