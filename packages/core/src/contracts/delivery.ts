/**
 * The shapes a delivery takes on its way through the receiver, shared by the steps, the observers
 * and the entries: types only, so that every floor can name them without importing another's code.
 */
import type { LedgerSource } from '../storage/ledger.js';
import type { DeliveryOutcome } from '../protocol/outcomes.js';
import type { RawBody } from '../protocol/signature.js';

/**
 * Where an event came from: `webhook` for a signed delivery, `reconcile` for an event recovered
 * through the API, `replay` for a delivery replayed from the ledger (a queued job keeps the source
 * it was queued from).
 */
export type DeliverySource = 'webhook' | 'reconcile' | 'replay';

/** What came of one delivery: its outcome and answer, and what names it. Logged, recorded, and given to `onError`. */
export interface DeliveryReport {
  /** What the receiver made of it (`OUTCOMES` says what each means). */
  outcome: DeliveryOutcome;
  /** The HTTP status it was answered with. */
  status: number;
  /** The merchant account, on a receiver with `accounts`, once it is known (never a name nobody resolved). */
  account?: string;
  /** The transaction's reference, once the body was read. */
  reference?: string;
  /** The event's name, once the body was read. */
  event?: string;
  /** The key it was deduplicated on, once it was computed. */
  dedupeKey?: string;
  /** Set on errors: what went wrong, for logs only (never sent back to the service). Logged under `err`. */
  error?: unknown;
  /** True for outcomes reported after the response was sent (a handler that finished after a 202). */
  late?: boolean;
  /** `webhook` for a signed delivery, `reconcile` for an event recovered through the API. */
  source?: DeliverySource;
  /** Set when a queue worker ran the event: the engine's job. */
  job?: JobInfo;
  /** Milliseconds from the body's arrival to this report (for a late outcome, to the handler's end), on the receiver's clock. */
  durationMs?: number;
  /** Which claim of the event this was: 1 the first time, more after a failure or an expired lease. */
  attempt?: number;
  /** Which of the configured secrets matched (rotation); absent when none did or none was needed. */
  secretIndex?: number;
  /** The delivery's record in the ledger (`store.ledger`), when the store keeps one. */
  deliveryId?: string;
  /** Held by the ordering guard: the earlier events of the transaction that have not run yet. */
  waitingFor?: string[];
  /** Why a signature was refused (401). */
  reason?: SignatureReason;
  /** With a missing signature: the other known signature header the delivery carried (see `signatureHeader`). */
  signatureHeaderSeen?: string;
  /** With reason `unknown-account`: the name the request gave, when it is one an account could have (never longer than 64). */
  accountNamed?: string;
  /** How a malformed signature header is malformed. */
  defect?: HeaderDefect;
  /** What most likely made no secret match, computed only when none did. */
  hints?: SignatureHint[];
  /**
   * Set when this answer left more than the service's 10 s after handlers began blocking the event
   * loop: the service may have given up on it and will retry. Logged at warn at least.
   */
  loopBlocked?: LoopBlocked;
}

/** The fields of a report that name the delivery. */
export type DeliveryFields = Omit<DeliveryReport, 'outcome' | 'status'>;

/** The answer the pipeline decided, for an adapter to write back. */
export interface ReceiverResult {
  /** The HTTP status. */
  status: number;
  /** The answer's headers (`content-type`, and `Allow` on a 405). */
  headers: Readonly<Record<string, string>>;
  /** A short JSON body naming the outcome; never internal error text. */
  body: string;
  /** What came of the delivery. */
  report: DeliveryReport;
}

/** Gets every failure: the error, and the report of the delivery it happened in. */
export type ErrorHandler = (error: unknown, report: DeliveryReport) => void;

/**
 * Why a signature was refused: no header, not the service's form, no secret matched, no usable
 * secret, or (a receiver with `accounts`) the request names no account the resolver knows.
 */
export type SignatureReason = 'missing' | 'malformed' | 'mismatch' | 'no-secret' | 'not-raw-body' | 'unknown-account';

/** How a malformed signature header differs from the service's `sha256=` + 64 lower-case hex digits. */
export type HeaderDefect = 'joined' | 'whitespace' | 'upper-case' | 'no-prefix' | 'length' | 'not-hex' | 'not-text';

/** What most likely made no secret match; each is computed only once none did. */
export type SignatureHint = 'secret-whitespace' | 're-serialised' | 'mode';

/** On a delivery's own report, when its answer left more than the service's 10 s after a blocked stretch began. */
export interface LoopBlocked {
  /** How long before this answer the stretch began, in ms. */
  sinceMs: number;
  /** The handlers that computed synchronously in the stretch so far. */
  by: string[];
}

/** What the receiver knows of a delivery beyond its report: set as the pipeline goes, read once it is answered. */
export interface Trace {
  id: string;
  receivedAt: number;
  source: LedgerSource;
  body?: RawBody;
  signatureHeader?: unknown;
  /** Set once the signature was checked: true when a secret matched. */
  verified?: boolean;
  replayOf?: string;
  forced?: boolean;
  /** The account of the record replayed, when it had one. */
  account?: string;
}

/**
 * What an adapter learned of a request: its method, its signature header, and either the raw
 * bytes or why there are none. Adapters only report; every answer is decided by `intake`.
 */
export interface RawDelivery {
  /** The request's method: only POST is taken. */
  method: string;
  /** The signature header as the framework gives it (a string, a list, or absent). */
  signature: unknown;
  /** When `signature` is absent: another known signature header the request carried (`signatureHeaderSeen`). */
  signatureHeaderSeen?: string;
  /**
   * The merchant account the request names (a receiver with `accounts`: its path's last segment, or
   * the header it is told): a stranger's word until that account's secret verifies the body.
   */
  account?: string;
  /** The untouched body bytes; absent when `problem` says why. */
  body?: RawBody;
  /**
   * Why there is no body: over the size limit while streaming (`too-large`), still arriving after
   * `bodyTimeoutMs` (`too-slow`), read or parsed by something before payhook (`unavailable`), or
   * broke off mid-upload (`unreadable`).
   */
  problem?: 'too-large' | 'too-slow' | 'unavailable' | 'unreadable';
  /** What a body parser left on the request, for the error that says how to mount payhook. */
  parsed?: unknown;
  /** The error behind `unreadable` (or a more precise one for `unavailable`), for the logs. */
  error?: unknown;
  /** The framework's name, so that the error for an unavailable body names its fix. */
  framework?: string;
}

/** The queue engine's view of the job a worker is running, in `ctx.job`. */
export interface JobInfo {
  /** The engine's job id. */
  id: string;
  /** 1 on the engine's first run of the job, one more on each retry. */
  attempt: number;
  /** The engine's limit; on the last attempt a failure goes to the dead-letter queue. */
  maxAttempts: number;
  /** The queue's name. */
  queue: string;
}
