import type { Mode } from './payment-lifecycle.js';
import type { TransactionRecord } from './api-schema.js';
import type { PaymentEvent } from './event-schema.js';
import type { PaymentEventName } from './payment-lifecycle.js';

/**
 * The webhook payload (section 2.1) a transaction record of the API stands for, so an event the
 * reconciler recovers looks to handlers, and to the dedupe key `mode:reference:event`, like the
 * delivery that was lost: `currencyCode` becomes `currency`, fields the record leaves out or sends
 * as null are null (a missing customer has its three fields null), `paidAt` is set on a success
 * only, and `mode` is the record's own, else `mode` (the environment of the key that listed it).
 * The status is the record's current one.
 * Fields of the record that a webhook does not carry (`checkoutUrl`, `updatedAt`…) are left out;
 * a handler finds the whole record on `ctx.record`.
 *
 * @example
 * const event = eventFromRecord(record, 'payment.success', 'sandbox');
 * await receiver.dispatch(event, { source: 'reconcile', record });
 */
export function eventFromRecord<E extends PaymentEventName>(record: TransactionRecord, eventName: E, mode?: Mode): PaymentEvent<E> {
  const eventMode = record.mode ?? mode;
  if (eventMode !== 'live' && eventMode !== 'sandbox') {
    throw new TypeError(
      `[@payhook/core] eventFromRecord: the record of ${record.reference} has no mode; pass the mode of the API key that read it ('sandbox' for sk_test_, 'live' for sk_live_).`,
    );
  }
  const { merchantReference, currencyCode } = record;
  if (merchantReference === null || currencyCode === null) {
    throw new TypeError(
      `[@payhook/core] eventFromRecord: the record of ${record.reference} has no ${merchantReference === null ? 'merchantReference' : 'currencyCode'}, which every event carries; its handlers were not run. Check the transaction in the service's dashboard.`,
    );
  }
  const customer = record.customer ?? null;
  return {
    event: eventName,
    mode: eventMode,
    reference: record.reference,
    merchantReference,
    amount: record.amount,
    serviceFee: record.serviceFee ?? null,
    currency: currencyCode,
    status: record.status,
    paymentMethod: record.paymentMethod ?? null,
    customer: { name: customer?.name ?? null, email: customer?.email ?? null, phone: customer?.phone ?? null },
    // As the service sends it: only a success carries the time it was paid (go-sdk types.go WebhookEvent).
    paidAt: eventName === 'payment.success' ? (record.paidAt ?? null) : null,
    createdAt: record.createdAt,
  } as PaymentEvent<E>;
}
