import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEvent, type EventOverrides } from '@payhook/testing';
import { checkPaymentEvent, type EventCheck } from '../../src/protocol/event-check.js';
import { paymentEventSchema } from '../../src/protocol/event-schema.js';
import { EVENT_NAMES } from '../../src/protocol/payment-lifecycle.js';

// The receiver checks every delivery by hand (checkPaymentEvent); the zod schema stays the written
// rule. These properties hold the hand check to `paymentEventSchema.safeParse`: the same verdict,
// the same parsed value (deep, strict), the same issues (path and message, in zod's order), on
// valid payloads of every event and on payloads a few fields away from one.

type Json = Record<string, unknown>;
const own = (value: unknown): PropertyDescriptor => ({ value, enumerable: true, writable: true, configurable: true });

/** A deep copy, frozen at every level: the check may read its input, never write to it (a write throws). */
function frozen<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozen)) as T;
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return value; // a Date, a Map, a class instance: as it is
  const copy = Object.create(proto) as Json;
  for (const key of Reflect.ownKeys(value)) Object.defineProperty(copy, key, own(frozen((value as Json)[key as string])));
  return Object.freeze(copy) as T;
}

/** toStrictEqual's deep equality (undefined is not missing, NaN is NaN, -0 is not 0, prototypes alike), which does not
 * take an own `constructor` key for the type: `"constructor": NaN` is valid JSON, and toStrictEqual fails on it. */
function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return false;
  const proto = Object.getPrototypeOf(a) as unknown;
  if (proto !== Object.getPrototypeOf(b) || (proto !== Object.prototype && proto !== Array.prototype && proto !== null)) return false;
  const [x, y, keys] = [a as Json, b as Json, Reflect.ownKeys(a) as string[]];
  return keys.length === Reflect.ownKeys(b).length && keys.every((k) => Object.hasOwn(y, k) && same(x[k], y[k]));
}

const issuesOf = (issues: readonly { path: PropertyKey[]; message: string }[]) => issues.map(({ path, message }) => ({ path, message }));
const reduced = (r: EventCheck) => (r.ok ? { ok: true, event: r.event } : { ok: false, issues: issuesOf(r.issues) });
function zodAnswer(value: unknown) {
  let r: ReturnType<typeof paymentEventSchema.safeParse>;
  try {
    r = paymentEventSchema.safeParse(value);
  } catch {
    // zod's min(1) throws on a length that cannot become a number (JSON can shadow valueOf and
    // toString with objects); the hand check must refuse such a payload instead, and not throw.
    return { threw: true } as const;
  }
  return r.success ? { ok: true, event: r.data } : { ok: false, issues: issuesOf(r.error.issues) };
}
/** Checks a frozen copy of `value` both ways and expects the same answer; returns the hand check's, and the copy it saw. */
function expectAgreement(value: unknown): { hand: EventCheck; input: unknown } {
  const input = frozen(value);
  const hand = checkPaymentEvent(input);
  const [mine, zods] = [reduced(hand), zodAnswer(input)];
  if ('threw' in zods) {
    expect(hand.ok, 'zod threw: the hand check refuses').toBe(false);
    return { hand, input };
  }
  if (!same(mine, zods)) {
    expect(mine).toStrictEqual(zods); // shows the difference
    expect.fail(`the answers differ where toStrictEqual does not look (an own "constructor" key?)`);
  }
  return { hand, input };
}

const KNOWN: ReadonlySet<string> = new Set(Object.keys(paymentEventSchema.shape));
const NULLABLE = ['serviceFee', 'paymentMethod', 'paidAt'] as const;
const CUSTOMER = ['name', 'email', 'phone'] as const;

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 2 }));
const filled = text.filter((s) => s.length > 0);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const digits = (n: number, width: number) => String(n).padStart(width, '0');
// 1 to 9 digits (leading zeros too), a dot, 2 digits.
const validMoney = fc
  .tuple(fc.nat(999_999_999), fc.nat(8), fc.nat(99))
  .map(([whole, zeros, cents]) => `${digits(whole, Math.min(9, String(whole).length + zeros))}.${digits(cents, 2)}`);
const capital = fc.integer({ min: 65, max: 90 });
const validCurrency = fc.tuple(capital, capital, capital).map((codes) => String.fromCharCode(...codes));
const YEARS_0_TO_9999 = { min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true };
const validTime = fc.oneof(
  fc.date(YEARS_0_TO_9999).map((d) => d.toISOString()),
  fc.constantFrom('2024-02-29T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '1600-02-29T12:00:00.000Z'),
);
/** A valid string one edit away from itself: a character replaced, inserted or deleted. */
const edited = (valid: fc.Arbitrary<string>) =>
  fc
    .tuple(valid, fc.nat(), fc.constantFrom('', '0', '9', '.', ',', '-', '+', ' ', 'a', 'Z', 'z', 't', ':', '１', '\n'), fc.nat(1))
    .map(([s, i, c, remove]) => s.slice(0, i % (s.length + 1)) + c + s.slice((i % (s.length + 1)) + remove));

// Unknown keys: any, and names of Object.prototype's members; not a known field's, nor __proto__ (zod drops it: see `replacements`).
const extraKey = fc
  .oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom('Amount', 'customer_name', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'then', 'length'),
  )
  .filter((k) => !KNOWN.has(k) && !(CUSTOMER as readonly string[]).includes(k) && k !== '__proto__');
const dictionary = (values: fc.Arbitrary<unknown>, maxKeys: number) => fc.dictionary(extraKey, values, { maxKeys, noNullPrototype: true });
const leaf = fc.oneof(text, fc.integer(), fc.double({ noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const shallow = fc.oneof(leaf, fc.array(leaf, { maxLength: 2 }), dictionary(leaf, 2));
const json = fc.oneof(shallow, fc.array(shallow, { maxLength: 3 }), dictionary(shallow, 3));
const anyValue = fc.oneof(
  text,
  fc.constantFrom('15', '15.0', '15.00', '1e3', '0x10', ' ', '', 'null', 'true'),
  fc.integer(),
  fc.double({ noDefaultInfinity: true }), // NaN too: a queue may carry it, JSON cannot
  fc.constantFrom(15, 15.5, 0, -0, NaN, null, undefined, true, false, [], {}, { length: 0 }, { length: '0' }),
  fc.array(json, { maxLength: 3 }),
  dictionary(fc.oneof(json, fc.constant(undefined)), 3),
);
const extras = dictionary(anyValue, 3);

// The payload's fields, drawn valid; `customer` with its three fields present. Without status, fee or method, createEvent's are kept.
const someCustomer = fc.record({ name: nullable(text), email: nullable(text), phone: nullable(text) }, { noNullPrototype: true });
const fields: Record<string, fc.Arbitrary<unknown>> = { mode: fc.constantFrom('live', 'sandbox'), customer: someCustomer };
Object.assign(fields, { reference: filled, merchantReference: text, amount: validMoney, serviceFee: nullable(validMoney) });
Object.assign(fields, { currency: validCurrency, status: filled, paymentMethod: nullable(text), paidAt: nullable(validTime) });
Object.assign(fields, { createdAt: validTime });
const requiredKeys = Object.keys(fields).filter((k) => !['status', 'serviceFee', 'paymentMethod'].includes(k));
const drawn = fc.record(fields, { requiredKeys });
/** A valid payload of any event, every field present, unknown fields added at the top and in `customer`. */
const complete = fc.tuple(fc.constantFrom(...EVENT_NAMES), drawn, extras, extras).map(([name, overrides, top, inCustomer]): Json => {
  const event: Json = { ...createEvent(name, overrides as EventOverrides), ...top };
  event.customer = { ...(event.customer as Json), ...inCustomer };
  return event;
});

type Way = 'keep' | 'drop' | 'undefined' | 'null';
function setWay(target: Json, key: string, way: Way) {
  if (way === 'drop') delete target[key];
  else if (way !== 'keep') target[key] = way === 'null' ? null : undefined;
}
const ways = fc.array(fc.constantFrom<Way>('keep', 'keep', 'drop', 'undefined'), { minLength: 3, maxLength: 3 });

/** A valid payload with nullable fields left out or undefined; `customer` null, undefined, missing, or in part. */
const loosened = fc
  .tuple(complete, ways, fc.constantFrom<Way>('keep', 'drop', 'undefined', 'null'), ways)
  .map(([event, top, customerWay, inCustomer]) => {
    const copy: Json = { ...event, customer: { ...(event.customer as Json) } };
    for (const [i, key] of NULLABLE.entries()) setWay(copy, key, top[i]!);
    for (const [i, key] of CUSTOMER.entries()) setWay(copy.customer as Json, key, inCustomer[i]!);
    setWay(copy, 'customer', customerWay);
    return copy;
  });

// Near misses, '|'-separated. Money: too long, not two decimals, signs, spaces, a comma, a full-width digit, a trailing newline.
const NEAR_MONEY = '0.00|999999999.99|1000000000.00|15|15.0|15.000|-1.00|+1.00| 1.00|1.00 |1,00|１.00|1.00\n|.00|1.|1e3'.split('|');
// Timestamps: no milliseconds, too few or many, no zone, an offset, days the month lacks, leap days that are and are not, lower case, a space.
const NEAR_TIMES = [
  '2026-11-20T09:15:02Z|2026-11-20T09:15:02.12Z|2026-11-20T09:15:02.1234Z|2026-11-20T09:15:02.123|2026-11-20T09:15:02.123+03:00',
  '2026-11-20T09:15:02.123+00:00|2026-02-30T09:15:02.123Z|2026-04-31T09:15:02.123Z|2026-13-01T09:15:02.123Z|2024-02-29T09:15:02.123Z',
  '2025-02-29T09:15:02.123Z|1900-02-29T09:15:02.123Z|2000-02-29T09:15:02.123Z|2026-11-20T24:00:00.000Z|2026-11-20T09:60:02.123Z',
  '2026-11-20t09:15:02.123z|2026-11-20T09:15:02.123z|2026-11-20 09:15:02.123Z|+002026-11-20T09:15:02.123Z|2026-11-20T09:15:02.123Z\n|2026-11-20',
].flatMap((line) => line.split('|'));
const NEAR_CURRENCY = 'ETB|etb|ET|ETBB|E1B|1TB|ET1|ETb|ET@|ET[|ÉTB|ETB\n'.split('|');

const customer = fc.oneof(
  fc.constantFrom(null, undefined, [], 'Abebe', '', 15, true, {}),
  fc.record({ name: anyValue, email: anyValue, phone: anyValue }, { requiredKeys: [], noNullPrototype: true }),
  fc.tuple(extras, nullable(text), anyValue).map(([e, name, email]) => ({ ...e, name, email })),
  anyValue,
);
const near = (...values: unknown[]) => fc.oneof(fc.constantFrom(...values), anyValue);
const nearMoney = fc.oneof(fc.constantFrom(...NEAR_MONEY), edited(validMoney), anyValue);
const nearTime = fc.oneof(fc.constantFrom(...NEAR_TIMES), edited(validTime), anyValue);
// What each field may become; `customer.x` is a field of the customer; `__proto__` an own key, as JSON.parse makes it.
const replacements: Record<string, fc.Arbitrary<unknown>> = { event: near('', ' ', 'payment.teleported', ...EVENT_NAMES), customer };
Object.assign(replacements, { mode: near('live', 'sandbox', 'Live', 'LIVE', ' live', 'test', ''), reference: near('', 'ref_1') });
Object.assign(replacements, { merchantReference: near(''), amount: nearMoney, serviceFee: nearMoney, status: near('', 'completed') });
const nearCurrency = fc.oneof(fc.constantFrom(...NEAR_CURRENCY), edited(validCurrency), anyValue);
Object.assign(replacements, { currency: nearCurrency, paymentMethod: near('') });
Object.assign(replacements, { paidAt: nearTime, createdAt: nearTime, extra: anyValue });
for (const key of [...CUSTOMER, '__proto__']) Object.defineProperty(replacements, `customer.${key}`, own(anyValue));
Object.defineProperty(replacements, '__proto__', own(anyValue));

const change = fc.oneof(...Object.entries(replacements).map(([field, value]) => fc.tuple(fc.constant(field), value)));
const changes = fc.uniqueArray(change, { minLength: 1, maxLength: 3, selector: ([field]) => field });
/** A payload one to three fields away from a valid one: each replaced, or dropped; its keys perhaps in reverse order. */
const mutated = fc.tuple(fc.oneof(complete, loosened), changes, fc.boolean(), fc.boolean()).map(([event, chosen, drop, reverse]) => {
  const copy: Json = { ...event };
  if (typeof copy.customer === 'object' && copy.customer !== null) copy.customer = { ...copy.customer };
  for (const [field, value] of chosen) {
    const [outer, inner] = field.split('.') as [string, string | undefined];
    const target = inner === undefined ? copy : copy[outer];
    if (typeof target !== 'object' || target === null) continue;
    if (drop && field !== 'extra') delete (target as Json)[inner ?? outer];
    else Object.defineProperty(target, inner ?? outer, own(value));
  }
  return reverse ? Object.fromEntries(Object.entries(copy).reverse()) : copy;
});

describe('checkPaymentEvent answers as paymentEventSchema.safeParse does', () => {
  it('a complete payload of every event is accepted as the very same object, untouched', () => {
    const seen = new Set<unknown>();
    fc.assert(
      fc.property(complete, (event) => {
        const { hand, input } = expectAgreement(event);
        seen.add(event.event);
        expect(hand.ok && hand.event).toBe(input); // no copy on the common path
      }),
      { numRuns: 500 },
    );
    expect([...seen].sort()).toStrictEqual([...EVENT_NAMES].sort());
  });

  it('a payload with nullable fields left out or undefined gets them as null, in a copy', () => {
    fc.assert(
      fc.property(loosened, (event) => void expect(expectAgreement(event).hand.ok).toBe(true)),
      { numRuns: 600 },
    );
  });

  it('payloads a few fields away from a valid one: the same verdict, value and issues', () => {
    let refused = 0;
    fc.assert(
      fc.property(mutated, (event) => {
        if (!expectAgreement(event).hand.ok) refused += 1;
      }),
      { numRuns: 3000 },
    );
    expect(refused).toBeGreaterThan(1500); // most are refused; the rest (an extra field, a nullable one dropped) pass
  });

  it('values that are not an object at the root', () => {
    for (const value of [null, undefined, 0, 15, NaN, '', 'x', '{}', true, false, [], [createEvent('payment.success')], {}]) {
      expectAgreement(value);
    }
    fc.assert(
      fc.property(json, (value) => void expectAgreement(value)),
      { numRuns: 300 },
    );
  });

  it('an own __proto__ key, as JSON.parse makes it, is dropped as zod drops it', () => {
    const { customer, ...rest } = createEvent('payment.refunded');
    const [body, known] = [JSON.stringify(rest).slice(1), `"customer":${JSON.stringify(customer)},`];
    const texts = [`{"__proto__":{"x":1},${known}${body}`, `{"__proto__":null,${known}${body}`, `{"customer":{"__proto__":7},${body}`];
    for (const json of texts) {
      const { hand } = expectAgreement(JSON.parse(json));
      expect(hand.ok && Object.keys(hand.event)).not.toContain('__proto__');
    }
  });

  it('a field whose length JSON made unconvertible (its toString and valueOf objects) is refused, where zod throws', () => {
    // fast-check found it (seed -1801207300): zod's min(1) compares the length with 1, which throws.
    const { event: _, ...rest } = createEvent('payment.success');
    for (const length of ['{"toString":{}}', '{"toString":{},"valueOf":{}}', '{"valueOf":1,"toString":[]}']) {
      const value = JSON.parse(`{"event":{"length":${length}},${JSON.stringify(rest).slice(1)}`);
      const hand = checkPaymentEvent(value);
      expect(hand.ok).toBe(false);
      expect(!hand.ok && hand.issues.map((i) => i.path.join('.'))).toContain('event');
    }
  });

  it('values a queue may carry that JSON cannot: Infinity, Date, Map, class instances, objects without a prototype', () => {
    class Order {}
    const odd = [Infinity, -Infinity, new Date(0), new Map(), new Set(), new Uint8Array(2), 10n, new Order(), Object.create(null)];
    const base = createEvent('payment.success');
    for (const value of odd) {
      expectAgreement(value);
      for (const field of [...KNOWN, 'extra']) expectAgreement({ ...base, [field]: value });
      for (const field of CUSTOMER) expectAgreement({ ...base, customer: { ...base.customer, [field]: value } });
    }
    expectAgreement(Object.assign(Object.create(null) as object, base));
    expectAgreement(Object.assign(new Order(), base));
    expectAgreement({ ...base, customer: Object.assign(Object.create(null) as object, base.customer) });
    expectAgreement(Object.assign(Object.create({ inherited: 1 }) as object, base)); // zod copies an inherited key (for...in)
  });
});
