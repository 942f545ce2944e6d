import type { EventHandler, HandlerContext, Plan } from './event-router.js';
import type { PaymentEvent } from './event-schema.js';

/**
 * What a receiver with a `handoff` puts on the queue for each new event: the event as verified and
 * parsed, and what a worker needs to run it as the receiver would have. Plain JSON.
 */
export interface QueuedEvent {
  /** The job format; a worker refuses (dead-letters) a version it does not know. */
  v: 1;
  event: PaymentEvent;
  /** The dedupe key the web process computed (its `dedupeKey` option): the worker claims this key. */
  dedupeKey: string;
  source: HandlerContext['source'];
  secretIndex: number | null;
  /** When the receiver queued it, ms since the epoch on its clock. */
  queuedAt: number;
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

/**
 * A durable queue a receiver hands events to (`ReceiverOptions.handoff`). `enqueue` runs while the
 * delivery holds its claim on the queued key (`ctx.dedupeKey`, `ctx.claimToken`); once it resolves
 * the receiver writes the done record. An engine that can commit the job with the done record in
 * one transaction does so (pg-boss); one that cannot makes the job id the dedupe key, so that a
 * retry after a crash between the two adds nothing (BullMQ).
 */
export interface Handoff {
  enqueue(job: QueuedEvent, ctx: HandlerContext): Promise<void>;
}

const QUEUED = 'queued:';

/** The key a receiver with a handoff claims: apart from the event's own key, which the worker claims when it runs the handlers. */
export const queuedKey = (dedupeKey: string): string => QUEUED + dedupeKey;

/**
 * The receiver's plan for every event the service defines when it hands off: one step that
 * enqueues, under the event's own key (the claimed key without its prefix). The worker runs the
 * merchant's handlers; the web process runs none.
 */
export function handoffPlan(handoff: Handoff, now: () => number): Plan {
  const enqueue: EventHandler = (event, ctx) =>
    handoff.enqueue(
      { v: 1, event, dedupeKey: ctx.dedupeKey.slice(QUEUED.length), source: ctx.source, secretIndex: ctx.secretIndex, queuedAt: now() },
      ctx,
    );
  return { handlers: [enqueue], wantsRecord: false };
}
