import * as z from 'zod';
import type { PaymentEventName } from './lifecycle.js';

export { EVENT_NAMES, isPaymentEventName, type PaymentEventName } from './lifecycle.js';

const MONEY = /^\d{1,9}\.\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const money = z.string().regex(MONEY, 'a decimal string with two fraction digits');
const timestamp = z.iso.datetime({ precision: 3 });
// zod's own pattern for the timestamp, so the fast check below accepts exactly what zod accepts.
const TIMESTAMP = timestamp._zod.pattern;

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
  currency: z.string().regex(CURRENCY, 'an ISO 4217 code'),
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
export const paymentEventSchema = z.looseObject(shape);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDigit = (c: number) => c >= 48 && c <= 57;
/** MONEY, by hand: 1 to 9 digits, a dot, 2 digits. */
function isMoney(v: unknown): boolean {
  if (typeof v !== 'string' || v.length < 4 || v.length > 12 || v.charCodeAt(v.length - 3) !== 46) return false;
  for (let i = 0; i < v.length; i++) if (i !== v.length - 3 && !isDigit(v.charCodeAt(i))) return false;
  return true;
}
/** CURRENCY, by hand: three capital letters. */
const isCurrency = (v: unknown): boolean =>
  typeof v === 'string' && v.length === 3 && isCapital(v.charCodeAt(0)) && isCapital(v.charCodeAt(1)) && isCapital(v.charCodeAt(2));
const isCapital = (c: number) => c >= 65 && c <= 90;
const isText = (v: unknown): v is string => typeof v === 'string';
const isTextOrNull = (v: unknown) => v === null || typeof v === 'string';
const isFilled = (v: unknown) => typeof v === 'string' && v.length > 0;

/**
 * `paymentEventSchema.safeParse(value).success`, checked by hand: the hot path of every delivery.
 * It shares the schema's timestamp pattern, spells MONEY and CURRENCY out as loops, and is tested for equivalence with it on generated payloads.
 * It wants every nullable field present (null or a value), so what it accepts is exactly what zod
 * returns unchanged; when it says no, the receiver asks zod, which fills left-out fields with null or gives the message.
 */
export function isPaymentEventShape(v: unknown): boolean {
  if (!isObject(v)) return false;
  const c = v.customer;
  return (
    isFilled(v.event) &&
    (v.mode === 'live' || v.mode === 'sandbox') &&
    isFilled(v.reference) &&
    isText(v.merchantReference) &&
    isMoney(v.amount) &&
    (v.serviceFee === null || isMoney(v.serviceFee)) &&
    isCurrency(v.currency) &&
    isFilled(v.status) &&
    isTextOrNull(v.paymentMethod) &&
    isObject(c) &&
    isTextOrNull(c.name) &&
    isTextOrNull(c.email) &&
    isTextOrNull(c.phone) &&
    (v.paidAt === null || (isText(v.paidAt) && TIMESTAMP.test(v.paidAt))) &&
    isText(v.createdAt) &&
    TIMESTAMP.test(v.createdAt)
  );
}

// The known fields only: an index signature would make `Omit` below erase them.
type Payload = z.output<z.ZodObject<typeof shape>>;

/**
 * A webhook payload, narrowed by its event name.
 *
 * @example
 * function fulfil(event: PaymentEvent<'payment.success'>) { orders.markPaid(event.merchantReference); }
 */
export type PaymentEvent<E extends PaymentEventName = PaymentEventName> = E extends PaymentEventName
  ? Omit<Payload, 'event'> & { event: E }
  : never;
