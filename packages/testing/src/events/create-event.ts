import { randomBytes } from 'node:crypto';
import type { PaymentEvent, PaymentEventName } from '@payhook/core';
import { EVENT_NAMES, isPaymentEventName, paymentEventSchema, STATUS_AFTER } from '@payhook/core/lifecycle';
import { serviceFeeFor } from '@payhook/core/api';

/** What `createEvent` lets a test set: any field of the payload, `customer` in part, and extra fields (they pass through). */
export type EventOverrides<E extends PaymentEventName = PaymentEventName> = Partial<Omit<PaymentEvent<E>, 'event' | 'customer'>> & {
  /** Any of the customer's fields; the rest keep the generated ones. */
  customer?: Partial<PaymentEvent['customer']>;
  [extra: string]: unknown;
};

/**
 * The payment method each event's payload carries by default. The status and whether the payment
 * was made come from core's lifecycle (STATUS_AFTER, wasPaid).
 */
const PAYMENT_METHOD: Record<PaymentEventName, string> = {
  'payment.success': 'telebirr',
  'payment.failed': 'telebirr',
  // Cancelled before the customer chose how to pay: the service sends "" until then.
  'payment.cancelled': '',
  'payment.refunding': 'telebirr',
  'payment.refunded': 'telebirr',
  'payment.reversed': 'telebirr',
};

let counter = 0;

/**
 * A new reference in the service's format: `ref_` + 16 base64url characters.
 *
 * @example
 * const event = createEvent('payment.success', { reference: newReference() });
 */
export const newReference = (): string => `ref_${randomBytes(12).toString('base64url')}`;

/**
 * A valid webhook payload (section 2.1) for `name`, with realistic defaults that agree with each
 * other: `payment.success` is `completed` and paid; every other event has `paidAt: null`, as the
 * service sends it (go-sdk types.go: "PaidAt is nil for every non-success event"). Each call gets a new
 * reference and merchant reference unless given. The result passes core's `paymentEventSchema`;
 * overrides that break it throw.
 *
 * @example
 * const paid = createEvent('payment.success', { merchantReference: 'order-1001', amount: '250.00' });
 * const refunded = createEvent('payment.refunded', { reference: paid.reference, merchantReference: 'order-1001' });
 */
export function createEvent<E extends PaymentEventName>(name: E, overrides: EventOverrides<E> = {}): PaymentEvent<E> {
  if (!isPaymentEventName(name)) {
    throw new TypeError(
      `[@payhook/testing] createEvent: "${String(name)}" is not an event of the service; use one of ${EVENT_NAMES.join(', ')}. ` +
        "To send an unknown event, spread createEvent('payment.success') and set `event` yourself.",
    );
  }
  counter += 1;
  const { customer, ...rest } = overrides;
  // Fixed offsets from now: created a minute ago, paid 42 s later, both with milliseconds as the service sends them.
  const created = Date.now() - 60_000;
  const amount = typeof rest.amount === 'string' ? rest.amount : '1500.00';
  const event = {
    event: name,
    mode: 'sandbox',
    reference: newReference(),
    merchantReference: `order-${process.pid}-${counter}`,
    amount,
    // An amount override that is not money gets no fee; the schema check below then names the amount.
    serviceFee: paymentEventSchema.shape.amount.safeParse(amount).success ? serviceFeeFor(amount) : '0.00',
    currency: 'ETB',
    status: STATUS_AFTER[name],
    paymentMethod: PAYMENT_METHOD[name],
    paidAt: name === 'payment.success' ? new Date(created + 42_123).toISOString() : null,
    createdAt: new Date(created).toISOString(),
    ...rest,
    customer: { name: 'Abebe Kebede', email: 'abebe@example.com', phone: '251911234567', ...customer },
  };
  const parsed = paymentEventSchema.safeParse(event);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TypeError(
      `[@payhook/testing] createEvent('${name}'): the override of ${issue.path.join('.') || 'the payload'} makes an invalid payload (${issue.message}); ` +
        'fix the override, or build the body by hand to test a malformed delivery.',
    );
  }
  return event as PaymentEvent<E>;
}

/**
 * The events of one transaction, in the order the service sends them, sharing its reference,
 * merchant reference, amount, customer and dates: for testing duplicates and reordering of a
 * payment's whole life.
 *
 * @example
 * const [paid, refunding, refunded] = createEvents(['payment.success', 'payment.refunding', 'payment.refunded']);
 * await deliver(app, [refunded, paid], { secret }); // the refund arrives first
 */
export function createEvents<const N extends readonly PaymentEventName[]>(
  names: N,
  overrides: EventOverrides = {},
): { [I in keyof N]: PaymentEvent<N[I]> } {
  if (!Array.isArray(names) || names.length === 0) {
    throw new TypeError(
      "[@payhook/testing] createEvents takes a non-empty list of event names, e.g. createEvents(['payment.success', 'payment.refunded']).",
    );
  }
  const first = createEvent(names[0]!, overrides);
  const shared = {
    reference: first.reference,
    merchantReference: first.merchantReference,
    createdAt: first.createdAt,
    customer: first.customer,
  };
  const paidAt = first.paidAt ?? new Date(Date.parse(first.createdAt) + 42_123).toISOString();
  return names.map((name, i) => {
    if (i === 0) return first;
    return createEvent(name, { paidAt: name === 'payment.success' ? paidAt : null, ...overrides, ...shared } as EventOverrides);
  }) as { [I in keyof N]: PaymentEvent<N[I]> };
}
