import type { TransactionRecord } from '../protocol/api-schema.js';
import { every, systemClock, type Clock } from '../base/clock.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { EVENTS_BY_STATUS, type PaymentEventName } from '../protocol/lifecycle.js';
import { toLog } from '../base/logger.js';
import type { LoggerOption } from '../contracts/log-fields.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { RECOVERED } from '../protocol/outcomes.js';
import type { Receiver } from '../contracts/receiving.js';
import { eventFromRecord } from '../protocol/record-event.js';
import type { Mode } from '../protocol/lifecycle.js';

/** The part of `@payhook/client` a reconciler uses. */
export interface ReconcileClient {
  /** The environment of the client's key: the mode of a record that does not carry its own. */
  readonly mode?: Mode;
  transactions: {
    listAll(filters: { from?: Date | string; to?: Date | string }): AsyncIterable<TransactionRecord>;
  };
}

export interface ReconcilerOptions {
  /** Best a client with `priority: 'background'` on the limiter the app's client uses. */
  client: ReconcileClient;
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

export interface Reconciler {
  /** Walk the transactions of a range and run every event that has no done record yet. */
  run(range: { from: Date | string; to: Date | string }): Promise<ReconcileRun>;
  /** Run every `everyMs` over the last `lookbackMs` (default 24 hours). Returns a function that stops it. */
  start(options: { everyMs: number; lookbackMs?: number; onRun?: (run: ReconcileRun) => void }): () => void;
}

/**
 * Recover what the webhooks missed: walk the service's list and dispatch, through the same
 * receiver and store, every event whose handlers have not run to the end. Each still runs once,
 * whether its webhook arrives later or never.
 *
 * @example
 * const background = createClient({ apiKey, baseUrl, limiter, priority: 'background' });
 * const reconciler = createReconciler({ client: background, receiver });
 * const stop = reconciler.start({ everyMs: 5 * 60_000 });
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { client, receiver, clock = systemClock } = options;
  const log = toLog(options.logger);

  /** Dispatch `name` as the webhook would have carried it: the dedupe key `mode:reference:event` must match. */
  async function recover(record: TransactionRecord, name: PaymentEventName): Promise<DeliveryReport> {
    let event: PaymentEvent;
    try {
      event = eventFromRecord(record, name, client.mode);
    } catch (error) {
      const report = reportOf('invalid', { error, reference: record.reference, event: name, source: 'reconcile' });
      log.write('error', { ...report, error: undefined, err: error }, (error as Error).message);
      return report;
    }
    return receiver.dispatch(event, { source: 'reconcile', record, account: options.account });
  }

  async function run(range: { from: Date | string; to: Date | string }): Promise<ReconcileRun> {
    const result: ReconcileRun = { scanned: 0, recovered: [], inProgress: [], failed: [] };
    for await (const record of client.transactions.listAll(range)) {
      result.scanned += 1;
      for (const name of EVENTS_BY_STATUS[record.status]) {
        // The record came from the service itself: handlers that want it need no second call.
        const report = await recover(record, name);
        const ran = RECOVERED.has(report.outcome);
        if (ran) result.recovered.push(report);
        else if (report.outcome === 'in-progress') result.inProgress.push(report);
        else if (report.status >= 400) result.failed.push(report);
        else continue;
        options.onRecovered?.(report);
        // Later events of a transaction wait for the earlier ones: never refunded before paid.
        // (A receiver with a handoff queues them in order; the workers run them as they come.)
        if (!ran) break;
      }
    }
    return result;
  }

  return {
    run,
    start({ everyMs, lookbackMs = 24 * 60 * 60 * 1000, onRun }) {
      let running = false;
      const tick = async () => {
        if (running) return;
        running = true;
        try {
          const to = new Date(clock.now());
          // Not `onRun?.(await run(…))`: an optional call skips its arguments, and the run with them.
          const result = await run({ from: new Date(to.getTime() - lookbackMs), to });
          onRun?.(result);
        } catch (error) {
          log.write('error', { err: error }, '[@payhook/core] a reconcile run failed; the next one will try again');
        } finally {
          running = false;
        }
      };
      const stop = every(clock, everyMs, () => void tick());
      void tick();
      return stop;
    },
  };
}
