import type { TransactionRecord } from '../protocol/api-schema.js';
import type { Clock } from '../base/clock.js';
import type { Deadlines } from '../base/deadlines.js';
import type { Awaitable } from '../base/maybe-async.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import type { CompleteOptions, Outcome, StoreOps } from '../storage/store-contract.js';
import type { StoreWatch } from '../storage/key-watches.js';
import type { DeliveryReport, DeliverySource, JobInfo } from '../contracts/delivery.js';
import type { EventHandler, HandlerContext, Plan, RecordClient } from '../contracts/handling.js';

/** What the claim-and-run step needs of the receiver. */
export interface RunSettings {
  ops: StoreOps;
  /** The store's watch on a running key, if it has one: a waiting copy is then told, not polling. */
  watch?: (key: string) => Promise<StoreWatch>;
  /** The handlers of an event name, and whether they asked for the service's record. */
  planFor: (name: string) => Plan;
  /** Call handlers in order, without a promise while each answers synchronously. */
  run: (handlers: readonly EventHandler[], event: PaymentEvent, context: HandlerContext) => Awaitable<void>;
  dedupeKey: (event: PaymentEvent) => string;
  leaseMs: number;
  retentionMs: number | undefined;
  clock: Clock;
  deadlines: Deadlines;
  report: (r: DeliveryReport) => DeliveryReport;
  client: RecordClient | undefined;
  verifyBeforeHandling: boolean;
  /** The options of every done record the receiver writes, made once. */
  doneRecord: Readonly<Record<Outcome, CompleteOptions>>;
  /** The answer at the budget when the platform gave no `waitUntil`: 202 (`accept`) or 503 (`retry`). */
  afterBudget: 'accept' | 'retry';
  /** Called when a 202 leaves work running with no `waitUntil` to keep the platform from freezing it. */
  acceptedUnguarded?: () => void;
  /** What a run that went to the end is: `processed`, or `queued` where the one step was a handoff's enqueue. */
  doneOutcome: 'processed' | 'queued';
  /** A copy that finds its event running: waits for it within the budget (`wait`), or answers 409 at once (`retry`). */
  onInProgress: 'wait' | 'retry';
}

export interface RunInput {
  secretIndex: number | null;
  /** The merchant account (a receiver with `accounts`): in the report, the handlers' context and the queued job. */
  account?: string;
  /** The account's own client, for a handler's `{ verify: true }`; else the receiver's. */
  client?: RecordClient;
  source: DeliverySource;
  /** Answer within this many milliseconds (Infinity: wait for the handlers, as a reconcile does). */
  budgetMs: number;
  /** When the delivery reached the receiver (clock ms), for the duration of a late outcome. */
  startedAt: number;
  record?: TransactionRecord;
  /** The key to claim, when it was computed elsewhere (a queued job carries the web process's). */
  key?: string;
  /** The queue's job, when a worker runs the event. */
  job?: JobInfo;
  /** The delivery's record in the ledger, carried into its late outcome. */
  deliveryId?: string;
  /**
   * Without a budget, how long a run that finds its event running waits for it (a queue worker's
   * copy of a job); unset, it answers `in-progress` at once (a reconcile). With a budget, the wait
   * ends with the budget.
   */
  waitMs?: number;
  /** Hands the work left at the budget to the platform's hook (see hold-open.ts); never throws. */
  waitUntil?: (work: Promise<unknown>) => void;
}
