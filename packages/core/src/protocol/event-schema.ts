import * as z from 'zod';
import type { PaymentEventName } from './payment-lifecycle.js';
import { CURRENCY, CURRENCY_MESSAGE, MONEY, MONEY_MESSAGE } from './event-rules.js';

export { EVENT_NAMES, isPaymentEventName, type PaymentEventName } from './payment-lifecycle.js';

const money = z.string().regex(MONEY, MONEY_MESSAGE);
const timestamp = z.iso.datetime({ precision: 3 });

/** A field the official SDKs model as nullable: null when the service sends null, or leaves it out. */
const orNull = <T extends z.ZodType>(schema: T) => schema.nullable().default(null);
const NO_CUSTOMER = { name: null, email: null, phone: null };

/**
 * The transaction payload of section 2.1, shared by every event. Unknown extra fields pass
 * through, so a field the service adds later never turns a delivery into a 400. What identifies
 * the event, its order and its money is required: `event`, `mode`, `reference`,
 * `merchantReference` (every initialize sends one: `@payhook/client` requires it), `amount`,
 * `currency`, `status`, `createdAt`. The rest may be null, as the official SDKs model them
 * (go-sdk types.go `WebhookEvent`, `Customer`): `serviceFee`, `paymentMethod`, the customer's
 * `name`, `email` and `phone`, and `paidAt` (null for a transaction that was never paid). Left
 * out, they arrive as null; a missing `customer` arrives with its three fields null.
 */
const shape = {
  event: z.string().min(1),
  mode: z.enum(['live', 'sandbox']),
  reference: z.string().min(1),
  merchantReference: z.string(),
  amount: money,
  serviceFee: orNull(money),
  currency: z.string().regex(CURRENCY, CURRENCY_MESSAGE),
  status: z.string().min(1),
  paymentMethod: orNull(z.string()),
  customer: z
    .looseObject({ name: orNull(z.string()), email: orNull(z.string()), phone: orNull(z.string()) })
    .nullable()
    .default(null)
    .transform((customer) => customer ?? { ...NO_CUSTOMER }),
  paidAt: orNull(timestamp),
  createdAt: timestamp,
};
/** The webhook payload as a zod schema (`shape` above), for tools that parse one; the receiver checks payloads by hand, to the same verdict (./event-check.ts). */
export const paymentEventSchema = z.looseObject(shape);

// The known fields only: an index signature would make `Omit` below erase them.
type Payload = z.output<z.ZodObject<typeof shape>>;

/**
 * A webhook payload, narrowed by its event name.
 *
 * @example
 * function fulfil(event: PaymentEvent<'payment.success'>) { orders.markPaid(event.merchantReference); }
 */
export type PaymentEvent<E extends PaymentEventName = PaymentEventName> = E extends PaymentEventName
  ? Omit<Payload, 'event'> & {
      /** The event's name: `payment.success`, …. */
      event: E;
    }
  : never;
