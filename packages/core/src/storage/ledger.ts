import type { DeadLetterReason, DeliveryOutcome } from '../protocol/outcomes.js';
import type { RawBody } from '../protocol/signature.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The delivery ledger: one record per delivery attempt, kept beside the store's claims, so that a
 * merchant can answer "what did the service send at 03:12 and what did we answer", replay a
 * delivery after a fix, and find the events that went to the dead letters. A store offers one as
 * `store.ledger` when it was created with a `ledger` option; the receiver then writes to it
 * after each answer, in batches, off the delivery's path.
 */
export interface Ledger {
  /** How bodies are kept: `keep` (the raw bytes, so deliveries can be replayed) or `hash` (SHA-256 only). */
  readonly body: LedgerBodyMode;
  /** Write records, in order; one call per batch. */
  append(entries: readonly LedgerEntry[]): Promise<void>;
  /** Add to a record: its late outcome, its dead letter, or the retry that answered its dead letter. */
  update(id: string, patch: LedgerPatch): Promise<void>;
  /** The record of that id, or undefined. */ get(id: string): Promise<LedgerEntry | undefined>;
  /** Records newest first, filtered by every field the query sets. */
  list(query?: LedgerQuery): Promise<LedgerEntry[]>;
  /** Delete records whatever their state (open dead letters too), with their index entries; resolves to how many were held. */
  remove(ids: readonly string[]): Promise<number>;
  /**
   * How long the store keeps the done record of an event sent to the dead letters (outcome
   * `failed`): a day past the longest an open dead letter is kept, so that re-posting its stored
   * bytes answers `duplicate` whatever expired first. Set by the store's ledger (`failedDoneTtl`).
   */
  readonly failedDoneTtlMs?: number;
}

/** `keep` (the raw bytes, for replay) or `hash` (their SHA-256 only). */ export type LedgerBodyMode = 'keep' | 'hash';

/** Where a delivery came from: signed by the service, recovered by a reconcile, or replayed from the ledger. */
export type LedgerSource = 'webhook' | 'reconcile' | 'replay';

/** One delivery attempt, as the ledger keeps it. */ export interface LedgerEntry {
  /** Unique per attempt, and sorts in the order records were received. */
  id: string;
  /** Epoch milliseconds on the receiver's clock. */
  receivedAt: number;
  /** `webhook`, `reconcile` or `replay`. */ source: LedgerSource;
  /** The merchant account (a receiver with `accounts`), once known: never a name nobody resolved. */
  account?: string;
  /** The transaction's reference, once read. */ reference?: string;
  /** The event's name, once read. */ event?: string;
  /** The key it was deduplicated on. */ dedupeKey?: string;
  /** What the receiver answered, and with which status. */
  outcome: DeliveryOutcome;
  /** The HTTP status. */ status: number;
  /** From the body's arrival to the answer. */
  durationMs: number;
  /** Which claim of the event this was (1 the first time); absent where nothing was claimed. */
  attempt?: number;
  /** `valid`, `invalid` (answered 401), or `not-checked` (a reconcile, or a request refused before the check). */
  signature: 'valid' | 'invalid' | 'not-checked';
  /** Which configured secret matched (rotation). */
  secretIndex?: number;
  /** The signature header as received, so that a replay checks it again on the stored bytes. */
  signatureHeader?: string;
  /** The raw body, as UTF-8 text (`bodyEncoding` utf8) or base64 when it is not UTF-8. Absent in `hash` mode and for a refusal. */
  body?: string;
  /** How `body` is written: `utf8` or `base64`. */ bodyEncoding?: 'utf8' | 'base64';
  /** Hex SHA-256 of the raw body, in `hash` mode and for a refusal (`isRefusal`). */
  bodySha256?: string;
  /** For a refusal, instead of its body: its first characters, control and bidi characters escaped as \uXXXX. */
  bodyPrefix?: string;
  /** The error's message, for the merchant; never sent to the service. */
  error?: string;
  /** What happened after a 202: the handler's outcome once it finished. */
  late?: LateOutcome;
  /** Set when the event went to the dead letters from this attempt. */
  deadLetter?: DeadLetter;
  /** For a replay: the record it replayed, and whether a done event was forced to run again. */
  replayOf?: string;
  /** Whether a done event was forced to run again. */ forced?: boolean;
}

/** What a handler still running at the 202 came to. */ export interface LateOutcome {
  /** The handler's outcome. */ outcome: DeliveryOutcome;
  /** From the body's arrival to the handler's end. */
  durationMs: number;
  /** The error's message, when it failed. */ error?: string;
}

/** An event sent to the dead letters, on the record of the attempt that sent it. */ export interface DeadLetter {
  /** `rejected`: a handler threw NonRetriableError. `late-failed`: a handler failed after the 202. `reconcile-failed`: a reconcile found the event and could not run it. */
  reason: DeadLetterReason;
  /** When it went there, epoch ms. */
  at: number;
  /** The id of the replay that retried it; an open dead letter has none. */
  retriedBy?: string;
}

/** What `update` adds to a record. */ export type LedgerPatch = Partial<Pick<LedgerEntry, 'late' | 'deadLetter'>>;

/** What `list` filters by; every field given must match. */ export interface LedgerQuery {
  /** Only this merchant account's records (a receiver with `accounts`). */
  account?: string;
  /** Only this transaction's records. */ reference?: string;
  /** Only this event's records. */ event?: string;
  /** Matches the answer's outcome or the late outcome. */
  outcome?: DeliveryOutcome;
  /** Received at or after, epoch ms. */
  since?: number;
  /** Received before, epoch ms. */
  until?: number;
  /** `open`: dead letters not yet retried; `all`: every dead letter. */
  deadLetters?: 'open' | 'all';
  /** Only records with an id below this one: the last id of the previous page. */
  before?: string;
  /** Default 50, at most 1000. */
  limit?: number;
}

/** A store's `ledger` option: how bodies are kept, and how many records for how long. */ export interface LedgerOptions {
  /** `keep` (default) stores the raw body, which replay needs; `hash` stores its SHA-256 only. */
  body?: LedgerBodyMode;
  /** Most records kept; the oldest go first. Open dead letters are kept past it. */
  maxEntries?: number;
  /** How long records are kept, in ms. Open dead letters are kept past it. Default 7 days. */
  retentionMs?: number;
  /**
   * Most refusals kept (`isRefusal`: unsigned or unreadable webhook requests, recorded without
   * their body), on a bound of their own: they never push out accepted records or dead letters.
   * Default 10,000 (1,000 in memory).
   */
  maxRefusals?: number;
  /** How long an open dead letter is kept (from its receipt), in ms; at least `retentionMs`. Default 30 days. */
  deadLetterRetentionMs?: number;
}

const DAY = 24 * 60 * 60 * 1000;
/** Seven days: how long records are kept by default. */ export const DEFAULT_LEDGER_RETENTION_MS = 7 * DAY;
/** Thirty days: how long an open dead letter is kept by default. */ export const DEFAULT_DEAD_LETTER_RETENTION_MS = 30 * DAY;
export const MAX_LEDGER_PAGE = 1000;

/** The options with defaults filled in and checked; `name` starts the error message (the store's package). */
export function ledgerSettings(options: LedgerOptions | true, name: string, defaultMax: number, defaultMaxRefusals = 10_000) {
  const o = options === true ? {} : options;
  const body = o.body ?? 'keep';
  if (body !== 'keep' && body !== 'hash') {
    throw new TypeError(
      `${name} ledger.body must be 'keep' or 'hash'; got ${String(body)}. Leave it unset to keep bodies, which replay needs.`,
    );
  }
  // Each bound: a positive number (whole where it counts records), or the error that says how to leave it unset.
  const positive = (field: keyof LedgerOptions, value: number, whole: boolean, unset: string): number => {
    if (whole ? Number.isInteger(value) && value > 0 : Number.isFinite(value) && value > 0) return value;
    throw new RangeError(
      `${name} ledger.${field} must be a positive ${whole ? 'whole number' : 'number of milliseconds'}; got ${value}. Leave it unset for ${unset}.`,
    );
  };
  const maxEntries = positive('maxEntries', o.maxEntries ?? defaultMax, true, String(defaultMax));
  const retentionMs = positive('retentionMs', o.retentionMs ?? DEFAULT_LEDGER_RETENTION_MS, false, '7 days');
  const maxRefusals = positive('maxRefusals', o.maxRefusals ?? defaultMaxRefusals, true, String(defaultMaxRefusals));
  const deadLetters = positive('deadLetterRetentionMs', o.deadLetterRetentionMs ?? DEFAULT_DEAD_LETTER_RETENTION_MS, false, '30 days');
  // An open dead letter is never dropped before the records around it.
  return { body, maxEntries, retentionMs, maxRefusals, deadLetterRetentionMs: Math.max(deadLetters, retentionMs) };
}

/** How long a store with this ledger keeps a `failed` done record: its own retention, or a day past the open dead letters. */
export const failedDoneTtl = (storeRetentionMs: number, settings: { deadLetterRetentionMs: number }): number =>
  Math.max(storeRetentionMs, settings.deadLetterRetentionMs + DAY);

/** The page size a query asks for, checked. */
export function pageSize(query: LedgerQuery, name: string): number {
  const limit = query.limit ?? 50;
  if (!(Number.isInteger(limit) && limit > 0 && limit <= MAX_LEDGER_PAGE)) {
    throw new RangeError(`${name} a ledger query's limit must be a whole number from 1 to ${MAX_LEDGER_PAGE}; got ${limit}.`);
  }
  return limit;
}

/** Whether a record answers a query (every filter but `limit`): one definition for every store. */
export function matchesQuery(e: LedgerEntry, q: LedgerQuery): boolean {
  if (q.account !== undefined && e.account !== q.account) return false;
  if (q.reference !== undefined && e.reference !== q.reference) return false;
  if (q.event !== undefined && e.event !== q.event) return false;
  if (q.outcome !== undefined && e.outcome !== q.outcome && e.late?.outcome !== q.outcome) return false;
  if (q.since !== undefined && e.receivedAt < q.since) return false;
  if (q.until !== undefined && e.receivedAt >= q.until) return false;
  if (q.before !== undefined && !(e.id < q.before)) return false;
  if (q.deadLetters === 'all' && e.deadLetter === undefined) return false;
  if (q.deadLetters === 'open' && (e.deadLetter === undefined || e.deadLetter.retriedBy !== undefined)) return false;
  return true;
}

/** Whether a record must be kept past the ledger's bounds: an open dead letter. */
export const isOpenDeadLetter = (e: LedgerEntry): boolean => e.deadLetter !== undefined && e.deadLetter.retriedBy === undefined;

/**
 * A refusal: a webhook request whose signature did not check out (401, or refused before the
 * check: 400, 405, 408, 413, no body). Anyone can send one, so it is kept as metadata only (no
 * body) and on a bound of its own (`maxRefusals`).
 */
export const isRefusal = (e: Pick<LedgerEntry, 'source' | 'signature'>): boolean => e.source === 'webhook' && e.signature !== 'valid';

/** Whether a record is still kept at `now`: within the retention, or an open dead letter within its own. */
export function isKept(e: LedgerEntry, now: number, s: { retentionMs: number; deadLetterRetentionMs: number }): boolean {
  return e.receivedAt >= now - s.retentionMs || (isOpenDeadLetter(e) && e.receivedAt >= now - s.deadLetterRetentionMs);
}

let last = -1;
let prefix = '';
let seq = 0;
let suffix: string | undefined;

/**
 * A record id: the time in base 36 (11 digits, so ids sort by time as strings), a counter within
 * the millisecond, and a random part per process, so that processes never collide.
 */
export function ledgerId(now: number): string {
  // Made on first use: a Worker forbids random values at module scope.
  suffix ??= crypto.randomUUID().slice(0, 8);
  if (now === last) seq += 1;
  else {
    last = now;
    prefix = `${now.toString(36).padStart(11, '0')}-`;
    seq = 0;
  }
  return `${prefix}${seq.toString(36).padStart(4, '0')}-${suffix}`;
}

/**
 * Ledgers that take a record's body as the request's bytes (`raw`) and make the text only when it
 * is read: a memory ledger holds thousands of records, and bytes off the JS heap cost the garbage
 * collector nothing, where a copy as a string is moved at every collection.
 */
export const TAKES_BYTES = new WeakSet<Ledger>();
/** The body as the ledger keeps it: UTF-8 text when it is (a webhook's JSON always is), else base64. */
export function textOf(body: RawBody): Pick<LedgerEntry, 'body' | 'bodyEncoding'> {
  if (typeof body === 'string') return { body, bodyEncoding: 'utf8' };
  try {
    return { body: utf8.decode(body), bodyEncoding: 'utf8' };
  } catch {
    let binary = '';
    for (let i = 0; i < body.length; i += 0x8000) binary += String.fromCharCode(...body.subarray(i, i + 0x8000));
    return { body: btoa(binary), bodyEncoding: 'base64' };
  }
}

/** The stored body back as the bytes that were signed. */
export function bytesOf(e: Pick<LedgerEntry, 'body' | 'bodyEncoding'>): RawBody | undefined {
  if (e.body === undefined) return undefined;
  if (e.bodyEncoding !== 'base64') return e.body;
  return Uint8Array.from(atob(e.body), (c) => c.charCodeAt(0));
}
