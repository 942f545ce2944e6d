import * as z from 'zod';
import type { PaymentEventName } from './lifecycle.js';

export { EVENT_NAMES, isPaymentEventName, type PaymentEventName } from './lifecycle.js';

const MONEY = /^\d{1,9}\.\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const money = z.string().regex(MONEY, 'a decimal string with two fraction digits');
const timestamp = z.iso.datetime({ precision: 3 });
// zod's own pattern for the timestamp, so the fast check below accepts exactly what zod accepts.
const TIMESTAMP = timestamp._zod.pattern;

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
  currency: z.string().regex(CURRENCY, 'an ISO 4217 code'),
  status: z.string().min(1),
  paymentMethod: z.string(),
  customer: z.looseObject({ name: z.string(), email: z.string(), phone: z.string() }),
  paidAt: timestamp.nullable(),
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
const isFilled = (v: unknown) => typeof v === 'string' && v.length > 0;

/**
 * `paymentEventSchema.safeParse(value).success`, checked by hand: the hot path of every delivery.
 * It shares the schema's timestamp pattern, spells MONEY and CURRENCY out as loops, and is tested for equivalence with it on generated payloads;
 * when it says no, the receiver asks zod for the message.
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
    isMoney(v.serviceFee) &&
    isCurrency(v.currency) &&
    isFilled(v.status) &&
    isText(v.paymentMethod) &&
    isObject(c) &&
    isText(c.name) &&
    isText(c.email) &&
    isText(c.phone) &&
    (v.paidAt === null || (isText(v.paidAt) && TIMESTAMP.test(v.paidAt))) &&
    isText(v.createdAt) &&
    TIMESTAMP.test(v.createdAt)
  );
}

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
