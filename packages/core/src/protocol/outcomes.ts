/**
 * Every answer payhook gives, written once: what the service is answered, how it is logged, what
 * it says of the event's handlers, and what a queue worker and the ledger make of it. Everything
 * else is derived from OUTCOMES, as the lifecycle's facts are from TRANSITIONS: the status of a
 * report, the level of its log line, the spans and metrics, the outcomes after which an event
 * counts as run, a job's verdict, a dead letter's reason and the ledger's indexed outcomes. A
 * ground floor: it imports only a type, so that any layer may read it; no second list of outcome
 * names lives anywhere in core (a test holds it so).
 */
import type { LogLevel } from '../base/logger.js';

/** The facts of one outcome: its answer, its log level, and what it means for the handlers, a queue job and the ledger. */
export interface OutcomeFacts {
  /** The HTTP status the service is answered. */
  status: number;
  /** The level it is logged at. A healthy service logs nothing above info: copies at debug and info, refusals at warn, what needs fixing or loses work at error. */
  level: LogLevel;
  /** This delivery's handlers: `ran` to their end (or threw), are still `running` after the answer (its late outcome follows), went to a worker (`queued`), or `none` ran. */
  handlers: 'ran' | 'running' | 'queued' | 'none';
  /** After it the event's handlers will not run again (done, handed to the queue, or nothing to run): a held event may go on, a dead letter is closed. */
  settled: boolean;
  /** What a queue worker does with the job: `complete` it, move it to the `dead-letter` queue, or `retry` it (dead-letter on its last attempt). */
  job: 'complete' | 'dead-letter' | 'retry';
  /** One of the answers most deliveries get: the ledger finds them by walking the newest records, and its outcome index leaves them out. */
  common: boolean;
  /** When the delivery goes to the ledger's dead letters: `always`; `unretried`, when no service retry follows (a reconcile's, or a late outcome after the answer); or `never`. */
  deadLetter: 'always' | 'unretried' | 'never';
  /** What the outcome means, in a few words (the board shows it over the outcome's name). */
  description: string;
}

/** Every outcome a receiver answers with, and its facts: one row each. `DeliveryOutcome` is one of their names. */
// biome-ignore format: one row per outcome, its facts read across as a table
export const OUTCOMES = {
  processed: { status: 200, level: 'info', handlers: 'ran', settled: true, job: 'complete', common: true, deadLetter: 'never',
    description: 'handlers ran' },
  queued: { status: 200, level: 'info', handlers: 'queued', settled: true, job: 'complete', common: true, deadLetter: 'never',
    description: "handed to the durable queue (the receiver's handoff); a worker runs the handlers" },
  duplicate: { status: 200, level: 'debug', handlers: 'none', settled: true, job: 'complete', common: true, deadLetter: 'never',
    description: 'done before, nothing ran' },
  ignored: { status: 200, level: 'debug', handlers: 'none', settled: true, job: 'complete', common: true, deadLetter: 'never',
    description: 'no handler for this event, or an event name the service does not define' },
  rejected: { status: 200, level: 'warn', handlers: 'ran', settled: true, job: 'dead-letter', common: false, deadLetter: 'always',
    description: 'a handler threw NonRetriableError; marked done, not retried' },
  mismatch: { status: 200, level: 'warn', handlers: 'none', settled: false, job: 'complete', common: false, deadLetter: 'never',
    description: "the service's record does not agree with the event; no handler ran, the claim is released" },
  accepted: { status: 202, level: 'info', handlers: 'running', settled: false, job: 'retry', common: true, deadLetter: 'never',
    description: "the budget ran out; the handler goes on (under the platform's waitUntil if given) and its outcome is recorded" },
  malformed: { status: 400, level: 'warn', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'signed, but not JSON payhook may parse (or an upload that broke off)' },
  invalid: { status: 400, level: 'error', handlers: 'none', settled: false, job: 'dead-letter', common: false, deadLetter: 'never',
    description: 'signed JSON, but not the event shape (a field missing or of another type); an error, since only a change here lets it through' },
  unauthorized: { status: 401, level: 'warn', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'signature missing or wrong' },
  'method-not-allowed': { status: 405, level: 'warn', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'not a POST (the answer says `Allow: POST`)' },
  'too-slow': { status: 408, level: 'warn', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'the body did not arrive within bodyTimeoutMs; the connection is closed' },
  // A worker's copy still held after two leases: the live run finishes the event or retries it.
  'in-progress': { status: 409, level: 'info', handlers: 'none', settled: false, job: 'complete', common: false, deadLetter: 'never',
    description: 'another delivery of the same event is running; the service retries later' },
  held: { status: 409, level: 'info', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: "an event that came before this one in the transaction's life has not run yet (the `ordering` option); the service retries later" },
  'too-large': { status: 413, level: 'warn', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'the body is over maxBodyBytes' },
  failed: { status: 500, level: 'error', handlers: 'ran', settled: false, job: 'retry', common: false, deadLetter: 'unretried',
    description: 'a handler threw; the claim is released so the retry runs it again' },
  'body-unavailable': { status: 500, level: 'error', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'something read the body before payhook; fix the mounting' },
  'store-unavailable': { status: 503, level: 'error', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: 'the store could not be reached; the service retries' },
  deferred: { status: 503, level: 'warn', handlers: 'running', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: "the budget ran out, no waitUntil, afterBudget 'retry': the service retries, and finds the event done or runs it again" },
  'account-unavailable': { status: 503, level: 'error', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: "the account's secrets could not be looked up (the accounts resolver threw, took too long, or its lookups a minute were spent); the service retries" },
  'verify-unavailable': { status: 503, level: 'error', handlers: 'none', settled: false, job: 'retry', common: false, deadLetter: 'never',
    description: "the service's record could not be fetched; the service retries" },
} as const satisfies Record<string, OutcomeFacts>;

/** Every answer the pipeline gives. */
export type DeliveryOutcome = keyof typeof OUTCOMES;

const NAMES = /* @__PURE__ */ Object.keys(OUTCOMES) as DeliveryOutcome[];
/** The outcomes, in the table's order, or those of them with a fact. */
export const outcomesWhere = (fact: (f: OutcomeFacts) => boolean): DeliveryOutcome[] => NAMES.filter((o) => fact(OUTCOMES[o]));
/**
 * One fact of every outcome, as a plain object: the hot path reads it with one lookup. The tables
 * below are marked pure, so that a bundle which uses none of them (verify-only) leaves them out.
 */
const each = <T>(fact: (f: OutcomeFacts, o: DeliveryOutcome) => T): Record<DeliveryOutcome, T> =>
  Object.fromEntries(NAMES.map((o) => [o, fact(OUTCOMES[o], o)])) as Record<DeliveryOutcome, T>;

/** The status of each outcome. */
export const STATUS: Readonly<Record<DeliveryOutcome, number>> = /* @__PURE__ */ each((f) => f.status);
/** The level each outcome is logged at. */
export const LEVEL: Readonly<Record<DeliveryOutcome, LogLevel>> = /* @__PURE__ */ each((f) => f.level);
/** After these the event's handlers will not run again. */
export const SETTLED: ReadonlySet<DeliveryOutcome> = /* @__PURE__ */ new Set(/* @__PURE__ */ outcomesWhere((f) => f.settled));

/** The outcomes of a reconcile that recovered its event: settled, by handlers that ran or by the queue (not a copy, not ignored). */
export const RECOVERED: ReadonlySet<DeliveryOutcome> = /* @__PURE__ */ new Set(
  /* @__PURE__ */ outcomesWhere((f) => f.settled && f.handlers !== 'none'),
);

/**
 * The answers most deliveries get, which the ledger finds by walking the newest records: a store's
 * index on the outcome leaves them out (`@payhook/store-postgres`'s partial index is built from this).
 */
export const COMMON_OUTCOMES: readonly DeliveryOutcome[] = /* @__PURE__ */ Object.freeze(/* @__PURE__ */ outcomesWhere((f) => f.common));

type Where<K extends keyof OutcomeFacts, V> = { [O in DeliveryOutcome]: (typeof OUTCOMES)[O][K] extends V ? O : never }[DeliveryOutcome];
/** Why a delivery went to the dead letters: its outcome, or for one a retry would have run again, when nothing retries it. */
export type DeadLetterReason = Where<'deadLetter', 'always'> | `${'late' | 'reconcile'}-${Where<'deadLetter', 'unretried'>}`;

/** Why a delivery with `outcome` goes to the dead letters, if it does: at its `answer`, the answer of a `reconcile`, or as a `late` outcome. */
export function deadLetterReason(outcome: DeliveryOutcome, when: 'answer' | 'reconcile' | 'late'): DeadLetterReason | undefined {
  const d = OUTCOMES[outcome].deadLetter;
  if (d === 'always') return outcome as DeadLetterReason;
  return d === 'unretried' && when !== 'answer' ? (`${when}-${outcome}` as DeadLetterReason) : undefined;
}
