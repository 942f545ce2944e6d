// A reconciler's options and results: shared by ./reconciler.ts and the run it loads, ./reconcile-run.ts.
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { Clock } from '../base/clock.js';
import type { LoggerOption } from '../contracts/log-fields.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { Receiver } from '../contracts/receiving.js';
import type { Mode } from '../protocol/payment-lifecycle.js';

/** The part of `@payhook/client` a reconciler uses. */
export interface ReconcileClient {
  /** The environment of the client's key: the mode of a record that does not carry its own. */
  readonly mode?: Mode;
  /** The transaction endpoint a reconciler calls. */
  transactions: {
    /** Every transaction of the range, across pages (and 90-day windows). */
    listAll(filters: { from?: Date | string; to?: Date | string }): AsyncIterable<TransactionRecord>;
  };
}

/** What `createReconciler` takes: the client and the receiver; the rest have defaults. */
export interface ReconcilerOptions {
  /** Best a client with `priority: 'background'` on the limiter the app's client uses. */
  client: ReconcileClient;
  /** The receiver whose handlers and store run the recovered events. */
  receiver: Receiver;
  /**
   * On a receiver with `accounts`: the account this reconciler recovers, whose API key `client`
   * holds (one reconciler per account). Its events run under that account's keys.
   */
  account?: string;
  /** Called for each event a run dispatched and each it could not. */
  onRecovered?: (report: DeliveryReport) => void;
  /** Time and timers for `start`, for tests. Default: the real ones. */
  clock?: Clock;
  /** Where a failed run of `start` is logged (at error, the error under `err`); the receiver's kinds of logger. Default: the console. */
  logger?: LoggerOption;
}

/** What one run found and did. */
export interface ReconcileRun {
  /** Transactions the list returned. */
  scanned: number;
  /** Events whose handlers ran in this run (or, with a handoff, that were queued): deliveries that were lost, failed or abandoned. */
  recovered: DeliveryReport[];
  /** Events still claimed by a running delivery (or a dead one whose lease has not run out); a later run takes them. */
  inProgress: DeliveryReport[];
  /** Events whose handlers threw again, or whose store could not be reached. */
  failed: DeliveryReport[];
}

/** A reconciler, as `createReconciler` makes it: one run over a range, or runs on a timer. */
export interface Reconciler {
  /** Walk the transactions of a range and run every event that has no done record yet. */
  run(range: { from: Date | string; to: Date | string }): Promise<ReconcileRun>;
  /** Run every `everyMs` over the last `lookbackMs` (default 24 hours). Returns a function that stops it. */
  start(options: { everyMs: number; lookbackMs?: number; onRun?: (run: ReconcileRun) => void }): () => void;
}
