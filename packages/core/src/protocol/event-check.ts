import type { PaymentEvent } from './event-schema.js';
import { CURRENCY, CURRENCY_MESSAGE, MONEY, MONEY_MESSAGE } from './event-rules.js';

/**
 * The payment event's shape (section 2.1), checked by hand: the receiver's path for every
 * delivery, with no schema library loaded. `paymentEventSchema` (./event-schema.ts) stays the
 * written schema, and the type comes from it; this is held to it by a property test over generated
 * payloads of every event (packages/core/test/protocol/event-check.test.ts): the same verdict, the same
 * parsed value, and the same issues, path and message, in the same order.
 */

/** One thing wrong with a payload: where (`['customer', 'email']`, `[]` for the payload itself) and what. */
export interface EventIssue {
  path: (string | number)[];
  message: string;
}
export type EventCheck = { ok: true; event: PaymentEvent } | { ok: false; issues: EventIssue[] };

// zod's pattern for `z.iso.datetime({ precision: 3 })`: a real calendar day, UTC, milliseconds.
const TIMESTAMP =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}(?:Z))$/;

/** What a value is, in zod's words ("received number", "received Infinity", "received array", "received Date"). */
function received(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? 'number' : String(v);
  if (typeof v !== 'object') return typeof v;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const c =
    Object.getPrototypeOf(v) !== Object.prototype && 'constructor' in v ? (v.constructor as { name?: unknown } | undefined) : undefined;
  return c ? String(c.name) : 'object';
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const expected = (type: string, v: unknown) => `Invalid input: expected ${type}, received ${received(v)}`;

/** A field's rule: undefined when the value passes, else the message. */
type Rule = (v: unknown) => string | undefined;
const text: Rule = (v) => (typeof v === 'string' ? undefined : expected('string', v));
const filled: Rule = (v) => text(v) ?? (v === '' ? 'Too small: expected string to have >=1 characters' : undefined);
/**
 * zod runs `min(1)` even on a value that is not a string, when it has a `length` under 1 (`[]`,
 * `{ length: 0 }`): a second issue for the same field, kept so the two agree on every value.
 */
function tooShort(v: unknown): string | undefined {
  if (typeof v === 'string' || v === null || v === undefined) return undefined;
  const length = (v as { length?: unknown }).length;
  if (length === undefined) return undefined;
  try {
    if ((length as number) >= 1) return undefined;
  } catch {
    // A length that cannot become a number: JSON can shadow `valueOf` and `toString` with objects
    // (`{"length":{"toString":{}}}`). zod throws a TypeError here; the field already has its issue.
    return undefined;
  }
  return Array.isArray(v) ? 'Too small: expected array to have >=1 items' : 'Too small: expected unknown to be >=1';
}
const matching =
  (pattern: RegExp, message: string): Rule =>
  (v) =>
    text(v) ?? (pattern.test(v as string) ? undefined : message);
const money = matching(MONEY, MONEY_MESSAGE);
const timestamp = matching(TIMESTAMP, 'Invalid ISO datetime');
const mode: Rule = (v) => (v === 'live' || v === 'sandbox' ? undefined : 'Invalid option: expected one of "live"|"sandbox"');

/** The payload's fields in the schema's order; `nullable` ones arrive as null when left out. */
const FIELDS: [name: string, rule: Rule, nullable: boolean][] = [
  ['event', filled, false],
  ['mode', mode, false],
  ['reference', filled, false],
  ['merchantReference', text, false],
  ['amount', money, false],
  ['serviceFee', money, true],
  ['currency', matching(CURRENCY, CURRENCY_MESSAGE), false],
  ['status', filled, false],
  ['paymentMethod', text, true],
  ['customer', () => undefined, true], // checked by checkCustomer below
  ['paidAt', timestamp, true],
  ['createdAt', timestamp, false],
];
const CUSTOMER_FIELDS = ['name', 'email', 'phone'] as const;

/**
 * `paymentEventSchema.safeParse(value)`, by hand. A payload with every field present comes back
 * as the same object; one with a nullable field left out comes back as a copy with it null (a
 * missing or null `customer` as one whose three fields are null). Unknown fields pass through.
 */
export function checkPaymentEvent(value: unknown): EventCheck {
  if (isObject(value) && isWholeEvent(value)) return { ok: true, event: value as PaymentEvent };
  if (!isObject(value)) return { ok: false, issues: [{ path: [], message: expected('object', value) }] };
  let issues: EventIssue[] | undefined;
  let filledIn: Record<string, unknown> | undefined;
  for (const [name, rule, nullable] of FIELDS) {
    const v = value[name];
    if (name === 'customer') {
      const c = checkCustomer(v, issues);
      issues = c.issues;
      if (c.value !== v) (filledIn ??= {})[name] = c.value;
      continue;
    }
    if (nullable && (v === undefined || v === null)) {
      if (v === undefined) (filledIn ??= {})[name] = null;
      continue;
    }
    const message = rule(v);
    if (message === undefined) continue;
    (issues ??= []).push({ path: [name], message });
    const short = rule === filled ? tooShort(v) : undefined;
    if (short !== undefined) issues.push({ path: [name], message: short });
  }
  if (issues) return { ok: false, issues };
  if (!filledIn && isPlain(value)) return { ok: true, event: value as PaymentEvent };
  return { ok: true, event: Object.assign(plainCopy(value), filledIn) as PaymentEvent };
}

/**
 * The service's usual payload: every field present (nullable ones may be null) and valid, on plain
 * objects, so zod would give it back as it is. The same rules as FIELDS and checkCustomer, read by
 * name in the same order: under half the loop's instructions on every delivery (issue 54). Any
 * other payload is read again by the loop, for its issues or its copy.
 */
function isWholeEvent(v: Record<string, unknown>): boolean {
  const c = v.customer;
  return (
    isPlain(v) &&
    isFilled(v.event) &&
    mode(v.mode) === undefined &&
    isFilled(v.reference) &&
    typeof v.merchantReference === 'string' &&
    isMatching(MONEY, v.amount) &&
    (v.serviceFee === null || isMatching(MONEY, v.serviceFee)) &&
    isMatching(CURRENCY, v.currency) &&
    isFilled(v.status) &&
    (v.paymentMethod === null || typeof v.paymentMethod === 'string') &&
    isObject(c) &&
    isPlain(c) &&
    isNullableText(c.name) &&
    isNullableText(c.email) &&
    isNullableText(c.phone) &&
    (v.paidAt === null || isMatching(TIMESTAMP, v.paidAt)) &&
    isMatching(TIMESTAMP, v.createdAt)
  );
}
const isFilled = (v: unknown) => typeof v === 'string' && v !== '';
const isMatching = (pattern: RegExp, v: unknown) => typeof v === 'string' && pattern.test(v);
const isNullableText = (v: unknown) => v === null || typeof v === 'string';

/** An object zod would give back field for field: a plain one, without an own `__proto__` key (JSON.parse makes one). */
const isPlain = (v: object) => Object.getPrototypeOf(v) === Object.prototype && !Object.hasOwn(v, '__proto__');

/** The object's enumerable fields (inherited ones too) on a plain object, as zod copies them; an own `__proto__` key is left out. */
function plainCopy(v: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in v) if (key !== '__proto__') copy[key] = v[key];
  return copy;
}

/** `customer`: null or left out is three nulls; an object keeps its unknown fields, its three known ones nullable strings. */
function checkCustomer(v: unknown, issues: EventIssue[] | undefined): { value: unknown; issues: EventIssue[] | undefined } {
  if (v === undefined || v === null) return { value: { name: null, email: null, phone: null }, issues };
  if (!isObject(v)) {
    (issues ??= []).push({ path: ['customer'], message: expected('object', v) });
    return { value: v, issues };
  }
  let copy = isPlain(v) ? undefined : plainCopy(v);
  for (const field of CUSTOMER_FIELDS) {
    const f = v[field];
    if (f === undefined) (copy ??= plainCopy(v))[field] = null;
    else if (f !== null && typeof f !== 'string') (issues ??= []).push({ path: ['customer', field], message: expected('string', f) });
  }
  return { value: copy ?? v, issues };
}

/** A value that is not a payment event: `issues` names each field and what is wrong with it (the logs' `invalid` fix reads them). */
export class EventShapeError extends Error {
  constructor(
    readonly issues: EventIssue[],
    what = 'the payload',
  ) {
    super(
      `[@payhook/core] ${what} is not a payment event: ${issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`).join('; ')}`,
    );
    this.name = 'EventShapeError';
  }
}
