import type { HandlerContext } from '../event-router.js';
import type { JobInfo } from '../handoff.js';
import type { HeaderDefect, SignatureHint, SignatureReason } from './diagnose.js';
import type { LoopBlocked } from './loop-watch.js';
import { STATUS, type DeliveryOutcome } from '../outcomes.js';

// The outcomes and their statuses live in the one table (../outcomes.ts); re-exported for the pipeline.
export { STATUS, type DeliveryOutcome } from '../outcomes.js';

export interface DeliveryReport {
  outcome: DeliveryOutcome;
  status: number;
  reference?: string;
  event?: string;
  dedupeKey?: string;
  /** Set on errors: what went wrong, for logs only (never sent back to the service). Logged under `err`. */
  error?: unknown;
  /** True for outcomes reported after the response was sent (a handler that finished after a 202). */
  late?: boolean;
  /** `webhook` for a signed delivery, `reconcile` for an event recovered through the API. */
  source?: HandlerContext['source'];
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

/** A report for `outcome`, with its status from the one table. */
export function reportOf(outcome: DeliveryOutcome, fields?: DeliveryFields): DeliveryReport {
  if (fields === undefined) return { outcome, status: STATUS[outcome] };
  // Every delivery's path: the names, copied by hand (a spread costs more than the rest of this).
  if (fields.error === undefined && fields.late === undefined) {
    const { reference, event, dedupeKey, source, attempt, secretIndex, deliveryId } = fields;
    return { outcome, status: STATUS[outcome], reference, event, dedupeKey, source, attempt, secretIndex, deliveryId };
  }
  return { outcome, status: STATUS[outcome], ...fields };
}

export interface ReceiverResult {
  status: number;
  headers: Readonly<Record<string, string>>;
  /** A short JSON body naming the outcome; never internal error text. */
  body: string;
  report: DeliveryReport;
}

export type ErrorHandler = (error: unknown, report: DeliveryReport) => void;

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });
// Stop reading an oversized or endless upload rather than take it all: the connection is closed after the answer.
const CLOSE = Object.freeze({ ...JSON_HEADERS, connection: 'close' });
const HEADERS: Partial<Record<number, Readonly<Record<string, string>>>> = {
  405: Object.freeze({ ...JSON_HEADERS, allow: 'POST' }),
  408: CLOSE,
  413: CLOSE,
};
const BODIES = Object.fromEntries(Object.keys(STATUS).map((o) => [o, `{"outcome":"${o}"}`])) as Record<DeliveryOutcome, string>;

/** The HTTP answer for a report: shared, frozen headers and a precomputed body per outcome. */
export const answerOf = (report: DeliveryReport): ReceiverResult => ({
  status: report.status,
  headers: HEADERS[report.status] ?? JSON_HEADERS,
  body: BODIES[report.outcome],
  report,
});
