import type { Timeline, TransactionRecord } from '../protocol/api-schema.js';
import type { PaymentEvent, PaymentEventName } from '../protocol/event-schema.js';
import type { DeliveryReport, DeliverySource, JobInfo, LoopBlocked } from './delivery.js';
import type { ClaimResult } from '../storage/store-contract.js';

/** What a handler learns about the delivery beside the event itself. */
export interface HandlerContext {
  /** The merchant account the event is for, on a receiver with `accounts` (its secret verified the delivery). */
  account?: string;
  /** The transaction's reference. */
  reference: string;
  /** The key the delivery was deduplicated on (mode + reference + event by default). */
  dedupeKey: string;
  /** Which of the configured secrets matched; null when the event came from a reconcile run. */
  secretIndex: number | null;
  /** True when an earlier run of this event did not finish (it threw, timed out or its process died). */
  redelivery: boolean;
  /** 1 on the first run, then one more for each earlier unfinished run. */
  attempt: number;
  /** The store's token for this claim: stores that commit a handler's effect with the done record fence on it. */
  claimToken: string;
  /** Where the event came from: a signed delivery, a reconcile, or a replay from the ledger. */
  source: DeliverySource;
  /** The service's own record, fetched before the handlers ran when a handler asked for it with `{ verify: true }`. */
  record?: TransactionRecord;
  /** Set when a queue worker runs the event: the engine's job, with its own attempt count. */
  job?: JobInfo;
}

/** How a handler is registered (`on`, `onAny`). */
export interface HandlerOptions {
  /** Fetch the service's record before running (verify for payment.success, retrieve for the rest) and run only if its status agrees with the event. */
  verify?: boolean;
}

/** A handler: gets the event, typed by its name, and what the receiver knows of the delivery. Throw to have it retried; throw `NonRetriableError` when a retry cannot help. */
export type EventHandler<E extends PaymentEventName = PaymentEventName> = (event: PaymentEvent<E>, context: HandlerContext) => unknown;

/**
 * A handler's way of taking its event's claim in the one transaction that runs its effect and
 * writes the done record, so that the three are one commit (Postgres's
 * `transactional(effect, { claim: 'inside' })`, the pg-boss handoff). Where such a handler is an
 * event's only one, the receiver calls this instead of claiming. It calls `claimed` once the claim
 * is taken, and resolves `ran` once all of it committed; a key that is not free gets the store's
 * ordinary claim's answer instead. A rejection after `claimed` is the effect's (or its commit's):
 * all of it rolled back and nothing is held. One before it is the store's.
 */
export type ClaimInside = (
  event: PaymentEvent,
  context: Omit<HandlerContext, 'claimToken' | 'attempt' | 'redelivery'>,
  leaseMs: number,
  claimed: (token: string, attempt: number) => void,
) => Promise<ClaimResult | { status: 'ran' }>;

/** What one event name runs: its handlers in order (`on` ones, then `onAny` ones), and whether any asked for the record. */
export interface Plan {
  handlers: readonly EventHandler[];
  wantsRecord: boolean;
}

/**
 * What a receiver with a `handoff` puts on the queue for each new event: the event as verified and
 * parsed, and what a worker needs to run it as the receiver would have. Plain JSON.
 */
export interface QueuedEvent {
  /** The job format; a worker refuses (dead-letters) a version it does not know. */
  v: 1;
  /** The event, as verified and parsed. */
  event: PaymentEvent;
  /** The dedupe key the web process computed (its `dedupeKey` option): the worker claims this key. */
  dedupeKey: string;
  /** Where the event came from: `webhook`, `reconcile` or `replay`. */
  source: HandlerContext['source'];
  /** Which of the configured secrets matched; null for a reconciled event. */
  secretIndex: number | null;
  /** The merchant account, on a receiver with `accounts`: the worker runs the handlers with it as `ctx.account`. */
  account?: string;
  /** When the receiver queued it, ms since the epoch on its clock. */
  queuedAt: number;
}

/**
 * A durable queue a receiver hands events to (`ReceiverOptions.handoff`). `enqueue` runs while the
 * delivery holds its claim on the queued key (`ctx.dedupeKey`, `ctx.claimToken`); once it resolves
 * the receiver writes the done record. An engine that can commit the job with the done record in
 * one transaction does so (pg-boss); one that cannot makes the job id the dedupe key, so that a
 * retry after a crash between the two adds nothing (BullMQ).
 */
export interface Handoff {
  /** Put the job on the queue; resolves once it is durably there. A rejection fails the delivery as a handler error would, and the service retries it. */
  enqueue(job: QueuedEvent, ctx: HandlerContext): Promise<void>;
  /**
   * The enqueue taking the queued key's claim in its own transaction (see `ClaimInside`): the
   * receiver then answers after one commit that holds the claim, the job and the done record.
   */
  enqueueClaiming?(
    job: QueuedEvent,
    ctx: Parameters<ClaimInside>[1],
    leaseMs: number,
    claimed: Parameters<ClaimInside>[3],
  ): ReturnType<ClaimInside>;
}

/** The part of `@payhook/client` the receiver uses to ask the service for the authoritative record. */
export interface RecordClient {
  /** The transaction endpoints the receiver calls. */
  transactions: {
    /** The transaction when it is completed; an error otherwise. */
    verify(reference: string): Promise<TransactionRecord>;
    /** The transaction as the service has it, in any status. */
    retrieve(reference: string): Promise<TransactionRecord>;
    /** The transaction's timeline: the ordering guard reads when each event happened. `@payhook/client` has it. */
    timeline?(reference: string): Promise<Timeline>;
  };
}

/**
 * What watches deliveries besides the logger: `openTelemetry()` from `@payhook/core/otel`, or your
 * own. Called once per report, after it is logged, with the receiver's clock at that moment: a
 * report's `durationMs` before `now` is when its delivery arrived. A late outcome (`late: true`)
 * follows its delivery's 202 or 503 report, with the same `dedupeKey`. Errors it throws are ignored.
 */
export interface Telemetry {
  /** Gets one report, with the receiver's clock. */
  record(report: DeliveryReport, now: number): void;
}

export interface LoopWatch {
  now(): number;
  /** After a handler's synchronous part, started at `startedAt`. */
  ran(handler: EventHandler, event: string, index: number, startedAt: number): void;
  /** As each answer leaves the pipeline: the evidence, when this answer is one the stretch made late. */
  answered(): LoopBlocked | undefined;
}

/** What a stretch of a blocked event loop did, as logged at warn. */
export interface LoopBlockedReport {
  /** The handlers that computed synchronously for `BLOCKING_MS` or more in the stretch. */
  blockedBy: { handler: string; event: string; runs: number; longestMs: number; totalMs: number }[];
  /** Answers sent more than the service's 10 s after the stretch began: the service may have given up on them. */
  lateAnswers: number;
  /** How long the stretch has lasted so far, in ms. */
  stretchMs: number;
}
