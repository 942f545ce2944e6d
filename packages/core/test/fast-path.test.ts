import fc from 'fast-check';
import secureJson from 'secure-json-parse';
import { describe, expect, it } from 'vitest';
import { createEvent } from '@payhook/testing';
import { isPaymentEventShape, paymentEventSchema } from '../src/protocol/event-schema.js';
import { Malformed, parseEvent } from '../src/steps/parse.js';

// The receiver's hot path replaces zod and secure-json-parse with hand checks; these properties
// hold it to exactly their answers, on payloads that differ from a valid one in one or more fields.

const timestamp = fc.oneof(
  fc.date({ min: new Date('1970-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
  // Near misses: no milliseconds, an offset, a day the month lacks, a leap day, lower-case z.
  fc.constantFrom(
    '2026-11-20T09:15:02Z',
    '2026-11-20T09:15:02.123+03:00',
    '2026-02-30T09:15:02.123Z',
    '2024-02-29T09:15:02.123Z',
    '2025-02-29T09:15:02.123Z',
    '2026-11-20T24:00:00.000Z',
    '2026-11-20t09:15:02.123z',
    '2026-11-20 09:15:02.123Z',
  ),
  fc.string(),
);
const money = fc.oneof(
  fc.constantFrom('0.00', '1500.00', '999999999.99', '1000000000.00', '15', '15.0', '15.000', '-1.00', ' 1.00', '1,00', '１.00'),
  fc.string(),
);
const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.array(fc.string()),
  fc.object(),
);
const fieldValues: Record<string, fc.Arbitrary<unknown>> = {
  event: fc.oneof(fc.constantFrom('payment.success', '', 'payment.teleported'), anyValue),
  mode: fc.oneof(fc.constantFrom('live', 'sandbox', 'Live', 'test', ''), anyValue),
  reference: fc.oneof(fc.constantFrom('', 'ref_1'), anyValue),
  merchantReference: fc.oneof(fc.constant(''), anyValue),
  amount: fc.oneof(money, anyValue),
  serviceFee: fc.oneof(money, anyValue),
  currency: fc.oneof(fc.constantFrom('ETB', 'etb', 'ET', 'ETBB', 'E1B', '1TB', 'ET1', 'ETb', 'ET@', 'ET['), anyValue),
  status: fc.oneof(fc.constantFrom('', 'completed'), anyValue),
  paymentMethod: fc.oneof(fc.constant(''), anyValue),
  customer: fc.oneof(fc.record({ name: anyValue, email: anyValue, phone: anyValue }, { requiredKeys: [] }), fc.constant([]), anyValue),
  paidAt: fc.oneof(timestamp, anyValue),
  createdAt: fc.oneof(timestamp, anyValue),
  extra: anyValue,
};

const mutated = fc
  .tuple(
    fc.constantFrom('payment.success', 'payment.failed', 'payment.refunded') as fc.Arbitrary<'payment.success'>,
    fc.dictionary(fc.constantFrom(...Object.keys(fieldValues)), fc.constant(true), { maxKeys: 3 }),
    fc.record(fieldValues),
    fc.boolean(),
  )
  .map(([name, chosen, values, drop]) => {
    const event: Record<string, unknown> = { ...createEvent(name) };
    for (const field of Object.keys(chosen)) {
      if (drop && field !== 'extra') delete event[field];
      else event[field] = values[field];
    }
    return event;
  });

describe('the fast path answers as zod and secure-json-parse do', () => {
  it('isPaymentEventShape agrees with paymentEventSchema on payloads near a valid one, where zod changes nothing', () => {
    // zod fills a left-out nullable field (and a missing customer) with null; the hand check wants them present, and leaves those payloads to zod.
    const complete = (e: Record<string, unknown>) =>
      ['serviceFee', 'paymentMethod', 'paidAt'].every((k) => e[k] !== undefined) &&
      typeof e.customer === 'object' &&
      e.customer !== null &&
      ['name', 'email', 'phone'].every((k) => (e.customer as Record<string, unknown>)[k] !== undefined);
    let filled = 0;
    fc.assert(
      fc.property(mutated, (event) => {
        const zod = paymentEventSchema.safeParse(event).success;
        if (zod && !complete(event)) filled += 1;
        expect(isPaymentEventShape(event)).toBe(zod && complete(event));
      }),
      { numRuns: 3000 },
    );
    expect(filled).toBeGreaterThan(0);
  });

  it('a left-out nullable field arrives as null, and a missing customer with its fields null', () => {
    const { serviceFee: _fee, paidAt: _paid, customer: _customer, ...rest } = createEvent('payment.failed');
    const parsed = parseEvent(JSON.stringify(rest));
    expect(parsed).not.toBeInstanceOf(Malformed);
    expect(parsed).toMatchObject({ serviceFee: null, paidAt: null, customer: { name: null, email: null, phone: null } });
  });

  it('agrees on values that are not objects at all', () => {
    for (const value of [null, undefined, 0, 'x', [], [createEvent('payment.success')], true]) {
      expect(isPaymentEventShape(value)).toBe(paymentEventSchema.safeParse(value).success);
    }
  });

  it('parseEvent accepts and refuses exactly what secure-json-parse and zod do, on any text', () => {
    const valid = JSON.stringify(createEvent('payment.success'));
    const texts = fc.oneof(
      fc.json(),
      fc.string(),
      // A valid payload with something spliced in after its first brace: proto keys, escapes, a BOM.
      fc
        .tuple(
          fc.constantFrom(
            '"__proto__":{"x":1},',
            '"constructor":{"prototype":{"x":1}},',
            '"constructor":{"name":"x"},',
            '"\\u005f_proto__":{"x":1},',
            '"note":"\\u00e9",',
            '"proto":1,',
            '',
          ),
          fc.boolean(),
        )
        .map(([insert, bom]) => (bom ? '\uFEFF' : '') + '{' + insert + valid.slice(1)),
    );
    fc.assert(
      fc.property(texts, (text) => {
        let expected: boolean;
        try {
          expected = paymentEventSchema.safeParse(
            secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
          ).success;
        } catch {
          expected = false;
        }
        expect(parseEvent(text) instanceof Malformed).toBe(!expected);
        expect(parseEvent(new TextEncoder().encode(text)) instanceof Malformed).toBe(!expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('walks the whole tree: a prototype key at the bottom of the deepest allowed tree is found, and a deeper tree is refused for its depth', () => {
    const deep = (levels: number, inner: string) => '{"a":' + '['.repeat(levels) + inner + ']'.repeat(levels) + '}';
    // 1 (the outer object) + 61 arrays + 2 (the inner objects) = 64 levels.
    expect(String((parseEvent(deep(61, '{"__proto__":{"x":1}}')) as Malformed).error)).toMatch(/prototype/i);
    const clean = parseEvent(deep(62, '{"b":1}'));
    expect(clean).toBeInstanceOf(Malformed); // misshapen, not polluted:
    expect(String((clean as Malformed).error)).not.toMatch(/prototype|deeper/i);
    expect(String((parseEvent(deep(200, '{"__proto__":{"x":1}}')) as Malformed).error)).toMatch(/deeper than 64 levels/);
  });
});
