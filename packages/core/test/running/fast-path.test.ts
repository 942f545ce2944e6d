import fc from 'fast-check';
import secureJson from 'secure-json-parse';
import { describe, expect, it } from 'vitest';
import { createEvent } from '@payhook/testing';
import { EventShapeError } from '../../src/protocol/event-check.js';
import { paymentEventSchema } from '../../src/protocol/event-schema.js';
import { Malformed, parseEvent } from '../../src/steps/parse.js';

// The receiver's hot path parses with JSON.parse and checks the shape by hand (checkPaymentEvent,
// held to zod in event-check.test.ts), asking secure-json-parse only when a prototype key may hide
// in the text. These properties hold parseEvent to exactly secure-json-parse's and zod's answers.

describe('the fast path answers as zod and secure-json-parse do', () => {
  it('a left-out nullable field arrives as null, and a missing customer with its fields null', async () => {
    const { serviceFee: _fee, paidAt: _paid, customer: _customer, ...rest } = createEvent('payment.failed');
    const parsed = await parseEvent(JSON.stringify(rest));
    expect(parsed).not.toBeInstanceOf(Malformed);
    expect(parsed).toMatchObject({ serviceFee: null, paidAt: null, customer: { name: null, email: null, phone: null } });
  });

  it('a misshapen payload is refused with the issues zod names, in its order', async () => {
    const { amount: _amount, ...rest } = createEvent('payment.success');
    const issues = (list: readonly { path: PropertyKey[]; message: string }[]) => list.map(({ path, message }) => ({ path, message }));
    for (const value of [
      { ...rest, currency: 'etb', customer: [] },
      { ...rest, reference: [] },
      [createEvent('payment.failed')],
      15,
      null,
    ]) {
      const parsed = await parseEvent(JSON.stringify(value));
      expect(parsed).toBeInstanceOf(Malformed);
      const { error } = parsed as Malformed;
      expect(error).toBeInstanceOf(EventShapeError);
      expect(issues((error as EventShapeError).issues)).toStrictEqual(issues(paymentEventSchema.safeParse(value).error!.issues));
    }
  });

  it('parseEvent accepts and refuses exactly what secure-json-parse and zod do, on any text', async () => {
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
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        let expected: boolean;
        try {
          expected = paymentEventSchema.safeParse(
            secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
          ).success;
        } catch {
          expected = false;
        }
        expect((await parseEvent(text)) instanceof Malformed).toBe(!expected);
        expect((await parseEvent(new TextEncoder().encode(text))) instanceof Malformed).toBe(!expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('walks the whole tree: a prototype key at the bottom of the deepest allowed tree is found, and a deeper tree is refused for its depth', async () => {
    const deep = (levels: number, inner: string) => '{"a":' + '['.repeat(levels) + inner + ']'.repeat(levels) + '}';
    // 1 (the outer object) + 61 arrays + 2 (the inner objects) = 64 levels.
    expect(String(((await parseEvent(deep(61, '{"__proto__":{"x":1}}'))) as Malformed).error)).toMatch(/prototype/i);
    const clean = await parseEvent(deep(62, '{"b":1}'));
    expect(clean).toBeInstanceOf(Malformed); // misshapen, not polluted:
    expect(String((clean as Malformed).error)).not.toMatch(/prototype|deeper/i);
    expect(String(((await parseEvent(deep(200, '{"__proto__":{"x":1}}'))) as Malformed).error)).toMatch(/deeper than 64 levels/);
  });
});
