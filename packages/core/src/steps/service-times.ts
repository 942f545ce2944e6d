import type { TransactionRecord } from '../protocol/api-schema.js';
import { eventOfStep, type PaymentEventName } from '../protocol/payment-lifecycle.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { RecordClient } from '../contracts/handling.js';

/** When each event of a transaction happened at the service (epoch ms), as far as it says. */
export interface ServiceTimes {
  times: Partial<Record<PaymentEventName, number>>;
  /** Why an event the service shows no time for was not run from its record. */
  unknown: (name: PaymentEventName) => Error;
}

const at = (iso: string | null | undefined): number | undefined => {
  const ms = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
};

/**
 * When the events in `names` happened, from the service's truth: a success from the record's
 * `paidAt`, the others from the transaction's timeline (read only when needed). A timeline of
 * another transaction, or one the service could not give, is a 503: the service retries.
 */
export async function whenHappened(
  client: RecordClient,
  record: TransactionRecord,
  names: readonly PaymentEventName[],
): Promise<ServiceTimes | DeliveryReport> {
  const times: ServiceTimes['times'] = {};
  const paidAt = at(record.paidAt);
  if (paidAt !== undefined) times['payment.success'] = paidAt;
  const unknown = (name: PaymentEventName) =>
    new Error(
      `[@payhook/core] the service shows no time for ${name} of ${record.reference} (${client.transactions.timeline ? 'not on its timeline' : 'the client has no timeline()'}), so the ordering guard did not run it from the record: it may have run before the store's retention.`,
    );
  if (names.every((name) => times[name] !== undefined) || !client.transactions.timeline) return { times, unknown };
  try {
    const timeline = await client.transactions.timeline(record.reference);
    if (timeline.reference !== undefined && timeline.reference !== record.reference) {
      throw new Error(
        `[@payhook/core] asked for the timeline of ${record.reference}, the service answered that of ${String(timeline.reference)}.`,
      );
    }
    for (const entry of timeline.events) {
      const name = eventOfStep(entry);
      const ms = at(entry.occurredAt);
      if (name && ms !== undefined) times[name] ??= ms;
    }
  } catch (error) {
    return reportOf('verify-unavailable', { error });
  }
  return { times, unknown };
}
