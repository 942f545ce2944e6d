import type { TransactionRecord } from '../protocol/api-schema.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { EVENTS_BY_STATUS, type PaymentEventName } from '../protocol/payment-lifecycle.js';
import type { Log } from '../base/logger.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { RECOVERED } from '../protocol/outcomes.js';
import { eventFromRecord } from '../protocol/record-event.js';
import type { ReconcileRun, ReconcilerOptions } from './reconcile-types.js';

/**
 * A reconciler's run (./reconciler.ts), loaded at its first: walk the service's list and dispatch,
 * through the receiver, every event whose handlers have not run to the end.
 */
export function reconcileRun(options: ReconcilerOptions, log: Log) {
  const { client, receiver } = options;

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

  return async function run(range: { from: Date | string; to: Date | string }): Promise<ReconcileRun> {
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
  };
}
