import type { TransactionRecord } from '../api-schema.js';
import type { Plan } from '../event-router.js';
import type { PaymentEvent } from '../event-schema.js';
import { AGREEING_STATUSES, EVENTS_BEFORE, isPaymentEventName, type PaymentEventName } from '../lifecycle.js';
import { eventFromRecord } from '../record-event.js';
import type { Store } from '../store.js';
import type { Clock } from '../clock.js';
import type { DeliveryReport } from './outcome.js';
import { reportOf } from './outcome.js';
import type { RecordClient } from './record-check.js';

export interface OrderGuardSettings {
  /** `hold`: answer 409 until the earlier events ran. `fetch`: ask the service for the record and run them first. */
  ordering: 'hold' | 'fetch';
  store: Store;
  dedupeKey: (event: PaymentEvent) => string;
  planFor: (name: string) => Plan;
  client: RecordClient | undefined;
  clock: Clock;
  /** Run a missing earlier event, as a reconcile does (no signature, the same claim). */
  dispatch: (event: PaymentEvent, record: TransactionRecord) => Promise<DeliveryReport>;
}

/** The report of an event held back, naming what it waits for (not one of reportOf's hand-copied fields). */
const held = (waitingFor: PaymentEventName[], error?: unknown): DeliveryReport => ({ ...reportOf('held', error === undefined ? undefined : { error }), waitingFor });

/** Outcomes after which an earlier event counts as run: its handlers will not run again. */
const RAN = new Set(['processed', 'queued', 'duplicate', 'ignored', 'rejected']);

/**
 * The ordering guard, from the lifecycle table: an event runs only once the events that come
 * before it in the transaction's life (EVENTS_BEFORE) ran, as the store's done records tell. Only
 * earlier events with handlers count: one nobody handles leaves no record to wait for. Returns the
 * report that ends the delivery (`held`, or the fetch's `mismatch`/`verify-unavailable`), or
 * undefined when the event may run. In `fetch` mode the missing events run first, in lifecycle
 * order, within `budgetMs`; past it the event is held and what was started goes on.
 */
export function createOrderGuard(s: OrderGuardSettings) {
  async function missingBefore(event: PaymentEvent): Promise<PaymentEventName[]> {
    const missing: PaymentEventName[] = [];
    for (const name of EVENTS_BEFORE[event.event as PaymentEventName]) {
      if (s.planFor(name).handlers.length === 0) continue;
      const record = await s.store.get(s.dedupeKey({ ...event, event: name } as PaymentEvent));
      if (record?.state !== 'done') missing.push(name);
    }
    return missing;
  }

  async function runMissing(event: PaymentEvent, missing: PaymentEventName[]): Promise<DeliveryReport | undefined> {
    let record: TransactionRecord;
    try {
      record = await s.client!.transactions.retrieve(event.reference);
    } catch (error) {
      const status = (error as { status?: number }).status;
      return reportOf(status === 404 ? 'mismatch' : 'verify-unavailable', { error });
    }
    if (!AGREEING_STATUSES[event.event as PaymentEventName].includes(record.status)) {
      const error = new Error(`[@payhook/core] the service says ${event.reference} is ${record.status}, which does not agree with ${event.event}; its handlers did not run.`);
      return reportOf('mismatch', { error });
    }
    for (let i = 0; i < missing.length; i++) {
      const r = await s.dispatch(eventFromRecord(record, missing[i]!, event.mode), record);
      if (!RAN.has(r.outcome)) return held(missing.slice(i), r.error);
    }
    return undefined;
  }

  return (event: PaymentEvent, budgetMs: number): Promise<DeliveryReport | undefined> | undefined => {
    if (!isPaymentEventName(event.event) || EVENTS_BEFORE[event.event].length === 0) return undefined;
    return missingBefore(event).then(
      (missing) => {
        if (missing.length === 0) return undefined;
        if (s.ordering === 'hold') return held(missing);
        if (budgetMs === Infinity) return runMissing(event, missing);
        // Within the budget, or held: the earlier events started here go on and are done when the service retries.
        return new Promise((resolve) => {
          const timer = s.clock.setTimeout(() => resolve(held(missing)), budgetMs);
          void runMissing(event, missing).then((r) => {
            s.clock.clearTimeout(timer);
            resolve(r);
          });
        });
      },
      (error: unknown) => reportOf('store-unavailable', { error }),
    );
  };
}
