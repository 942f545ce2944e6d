import { createEvent } from '@payhook/testing';
import fc from 'fast-check';

/**
 * The fuzz's knobs and its bodies, shared by the receiver fuzz (test/security/fuzz/) and core's
 * fuzz of the signature diagnosis (packages/core/test/observing/diagnose.test.ts).
 *
 * CI runs 10,000 cases in all, each suite its share of them; `PAYHOOK_FUZZ_RUNS=200000 npx vitest
 * run test/security/fuzz packages/core/test/observing/diagnose.test.ts` runs more, in the same
 * shares, and `PAYHOOK_FUZZ_SEED` draws other cases.
 */
export const FUZZ_TOTAL = Number(process.env.PAYHOOK_FUZZ_RUNS ?? 10_000);
export const FUZZ_SEED = Number(process.env.PAYHOOK_FUZZ_SEED ?? 20261122);
/** Cases for a share of FUZZ_TOTAL, at least 50. */
export const fuzzRuns = (share: number): number => Math.max(50, Math.round(FUZZ_TOTAL * share));

/** The receivers' body limit under fuzz: every hostile text fits under it, the huge bodies go past it. */
export const MAX_BODY = 16 * 1024;

/** A body and what it carries that a receiver must refuse. */
export interface BodyKind {
  body: Buffer;
  /** The body carries a `__proto__` / `constructor.prototype` key (in some spelling). */
  pollutes: boolean;
  /** The body is not valid UTF-8. */
  badUtf8: boolean;
}

/** JSON text fragments that try to reach a prototype, raw and `\u`-escaped. */
const POLLUTERS = [
  '"__proto__":{"polluted":"yes"}',
  '"\\u005f_proto__":{"polluted":"yes"}',
  '"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":"yes"}',
  '"__pro\\u0074o__":{"polluted":"yes"}',
  '"constructor":{"prototype":{"polluted":"yes"}}',
  '"constructor":{"\\u0070rototype":{"polluted":"yes"}}',
  '"\\u0063onstructor":{"prototype":{"polluted":"yes"}}',
];

/** Byte sequences that are not UTF-8: a lone continuation, an overlong '/', a surrogate, a cut sequence, 0xFF. */
const BAD_UTF8 = [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3, 0x28]].map((b) =>
  Buffer.from(b),
);

/** Merchant references of the events sent; 'throw' makes the fuzz's handler throw. */
const merchantReference = fc.constantFrom('ok', 'ok', 'ok', 'throw', 'order-1');

/** A real event's text, of a name the service defines or not. */
const validEvent = fc
  .record({ mr: merchantReference, event: fc.constantFrom('payment.success', 'payment.refunded', 'payment.teleported') })
  .map(({ mr, event }) => JSON.stringify({ ...createEvent('payment.success', { merchantReference: mr }), event }));

/**
 * What a stranger sends to make a step work hard or fall over (issue 30): nesting that overflowed
 * the signature diagnosis' JSON.stringify, nesting left open, huge numbers and strings, escapes
 * that grow when stored, a BOM before a real event. Each fits under MAX_BODY.
 */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 8000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 1, max: 3000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  fc.integer({ min: 1, max: 2000 }).map((n) => `${'[{"b":'.repeat(n)}null${'}]'.repeat(n)}`),
  fc.integer({ min: 1, max: 16_000 }).map((n) => '['.repeat(n)),
  fc.integer({ min: 300, max: 15_000 }).map((n) => `{"amount":1${'0'.repeat(n)},"reference":1e999999}`),
  fc.integer({ min: 1, max: 2500 }).map((n) => `{"reference":"${'\\u0000\\u001b'.repeat(n)}"}`),
  fc.integer({ min: 1000, max: 15_000 }).map((n) => `{"reference":"${'r'.repeat(n)}","event":"payment.success"}`),
  validEvent.map((t) => `\ufeff${t}`),
);

/** Bodies hostile, real, polluting, not UTF-8, random and huge, in the fuzz's proportions. */
export const bodyArb: fc.Arbitrary<BodyKind> = fc.oneof(
  // Hostile: deep, huge or odd, under every kind of signature header (a well-formed wrong one most of all).
  { weight: 3, arbitrary: hostileText.map((t) => ({ body: Buffer.from(t), pollutes: false, badUtf8: false })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(hostileText, fc.constantFrom(...BAD_UTF8))
      .map(([t, bad]) => ({ body: Buffer.concat([bad, Buffer.from(t)]), pollutes: false, badUtf8: true })),
  },
  // A real event: the handler should run (or 200 ignored, for an unknown event name).
  { weight: 4, arbitrary: validEvent.map((t) => ({ body: Buffer.from(t), pollutes: false, badUtf8: false })) },
  // A real event with a polluting key at the top or inside `customer`.
  {
    weight: 3,
    arbitrary: fc.tuple(validEvent, fc.constantFrom(...POLLUTERS), fc.boolean()).map(([t, p, nested]) => {
      const text = nested ? t.replace('"customer":{', `"customer":{${p},`) : `{${p},${t.slice(1)}`;
      return { body: Buffer.from(text), pollutes: true, badUtf8: false };
    }),
  },
  // A real event with invalid UTF-8 inside a string value.
  {
    weight: 2,
    arbitrary: fc.tuple(validEvent, fc.constantFrom(...BAD_UTF8)).map(([t, bad]) => {
      const at = t.indexOf('Abebe') + 2;
      return { body: Buffer.concat([Buffer.from(t.slice(0, at)), bad, Buffer.from(t.slice(at))]), pollutes: false, badUtf8: true };
    }),
  },
  // Random JSON, random fields replaced, random bytes, empty.
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((t) => ({ body: Buffer.from(t), pollutes: false, badUtf8: false })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        validEvent,
        fc.constantFrom('amount', 'reference', 'event', 'mode', 'customer', 'paidAt', 'status'),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([t, field, value]) => ({
        body: Buffer.from(JSON.stringify({ ...JSON.parse(t), [field]: value })),
        pollutes: false,
        badUtf8: false,
      })),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => ({ body: Buffer.from(b), pollutes: false, badUtf8: false })) },
  { weight: 1, arbitrary: fc.constant({ body: Buffer.alloc(0), pollutes: false, badUtf8: false }) },
  // Huge: past the limit, up to 12x it.
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_BODY + 1, max: 12 * MAX_BODY })
      .map((n) => ({ body: Buffer.alloc(n, 0x7b), pollutes: false, badUtf8: false })),
  },
);
