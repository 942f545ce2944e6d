import { z } from 'zod';

/** The events of section 6 of the service's interface, in the order a payment's life can emit them. */
export const EVENT_NAMES = [
  'payment.success',
  'payment.failed',
  'payment.cancelled',
  'payment.refunding',
  'payment.refunded',
  'payment.reversed',
] as const;

export type PaymentEventName = (typeof EVENT_NAMES)[number];

export function isPaymentEventName(name: unknown): name is PaymentEventName {
  return typeof name === 'string' && (EVENT_NAMES as readonly string[]).includes(name);
}

const money = z.string().regex(/^\d{1,9}\.\d{2}$/, 'a decimal string with two fraction digits');
const timestamp = z.iso.datetime({ precision: 3 });

/**
 * The transaction payload of section 2.1, shared by every event. Unknown extra fields pass
 * through, so a field the service adds later never turns a delivery into a 400. `paidAt` is
 * null for a transaction that was never paid (failed, cancelled).
 */
const shape = {
  event: z.string().min(1),
  mode: z.enum(['live', 'sandbox']),
  reference: z.string().min(1),
  merchantReference: z.string(),
  amount: money,
  serviceFee: money,
  currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code'),
  status: z.string().min(1),
  paymentMethod: z.string(),
  customer: z.looseObject({ name: z.string(), email: z.string(), phone: z.string() }),
  paidAt: timestamp.nullable(),
  createdAt: timestamp,
};
export const paymentEventSchema = z.looseObject(shape);

// The known fields only: an index signature would make `Omit` below erase them.
type Payload = z.infer<z.ZodObject<typeof shape>>;

/**
 * A webhook payload, narrowed by its event name.
 *
 * @example
 * function fulfil(event: PaymentEvent<'payment.success'>) { orders.markPaid(event.merchantReference); }
 */
export type PaymentEvent<E extends PaymentEventName = PaymentEventName> = E extends PaymentEventName
  ? Omit<Payload, 'event'> & { event: E }
  : never;
