import { sign } from '@payhook/core';
import { EVENT_NAMES } from '@payhook/core/lifecycle';
import { MAX_BODY } from '@payhook/test-support/hostile-bodies';
import fc from 'fast-check';
import { expect } from 'vitest';
import { type Case, caseArb, SECRET } from './cases.js';
import { type Answer, check } from './oracle.js';
import { eventKey, type Target } from './targets.js';

/**
 * The other way round (test/security/fuzz/): valid deliveries, among hostile ones and refused
 * copies of themselves, get 200 and run the handler once per event.
 */

/** Text as a customer or the service may write it: any Unicode, in whole graphemes. */
const text = (minLength: number, maxLength: number) => fc.string({ unit: 'grapheme', minLength, maxLength });
const money = fc.tuple(fc.nat(999_999_999), fc.nat(99)).map(([units, cents]) => `${units}.${String(cents).padStart(2, '0')}`);
const instant = fc
  .date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2099-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const orNull = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

/**
 * A payload within the schema of section 2.1, for any event the service defines: each field drawn
 * from what the schema allows, the nullable ones null, set or left out, and extra fields (they pass
 * through). 'throw' is left out of merchant references: it makes the handler throw.
 */
const payloadArb = fc.record(
  {
    event: fc.constantFrom(...EVENT_NAMES),
    mode: fc.constantFrom('live', 'sandbox'),
    reference: text(1, 24),
    merchantReference: text(0, 40).filter((m) => m !== 'throw'),
    amount: money,
    serviceFee: orNull(money),
    currency: fc.stringMatching(/^[A-Z]{3}$/),
    status: text(1, 20),
    paymentMethod: orNull(text(0, 20)),
    customer: orNull(
      fc.record({ name: orNull(text(0, 40)), email: orNull(text(0, 40)), phone: orNull(text(0, 16)) }, { requiredKeys: [] }),
    ),
    paidAt: orNull(instant),
    createdAt: instant,
    note: text(0, 40),
    attempt: fc.integer(),
  },
  { requiredKeys: ['event', 'mode', 'reference', 'merchantReference', 'amount', 'currency', 'status', 'createdAt'] },
);
type Payload = typeof payloadArb extends fc.Arbitrary<infer P> ? P : never;

/** A copy of a valid delivery, sent just before it, that must be refused without touching its event. */
type Twin = 'unsigned' | 'other-secret' | 'well-formed' | 'tampered' | 'invalid' | 'get' | 'too-large' | 'cut';

const validArb = fc.record({
  payload: payloadArb,
  indent: fc.constantFrom(0, 2),
  header: fc.constantFrom('x-service-signature', 'X-Service-Signature', 'X-SERVICE-SIGNATURE'),
  contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', ''),
  chunks: fc.array(fc.nat(), { maxLength: 6 }),
  twin: fc.option(fc.constantFrom<Twin>('unsigned', 'other-secret', 'well-formed', 'tampered', 'invalid', 'get', 'too-large', 'cut'), {
    nil: undefined,
    freq: 2,
  }),
});
type Valid = typeof validArb extends fc.Arbitrary<infer V> ? V : never;

type Step = { kind: 'valid'; v: Valid } | { kind: 'hostile'; c: Case } | { kind: 'again'; pick: number };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: validArb.map((v) => ({ kind: 'valid' as const, v })) },
  { weight: 3, arbitrary: caseArb.map((c) => ({ kind: 'hostile' as const, c })) },
  // The service's retry of a delivery already answered: the same bytes again.
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: 'again' as const, pick })) },
);
/** Hostile input, valid deliveries and retries interleaved, with at least one valid delivery. */
export const planArb = fc
  .tuple(fc.array(stepArb, { maxLength: 4 }), validArb, fc.array(stepArb, { maxLength: 4 }))
  .map(([before, v, after]) => [...before, { kind: 'valid' as const, v }, ...after]);

interface ValidCase extends Case {
  key: string;
}

/** The delivery as the service sends it; `run` makes its reference unique to one run of a property. */
function validCase(v: Valid, run: number): ValidCase {
  const payload: Payload = { ...v.payload, reference: `${v.payload.reference}~${run}` };
  const body = Buffer.from(JSON.stringify(payload, null, v.indent));
  const headers: [string, string][] = v.contentType ? [['content-type', v.contentType]] : [];
  headers.push([v.header, sign(body, SECRET)], ['user-agent', 'fuzz-service']);
  const chunks = [...new Set(v.chunks.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  return {
    method: 'POST',
    headers,
    body,
    validSignature: true,
    pollutes: false,
    badUtf8: false,
    chunks,
    lie: 'none',
    key: eventKey(payload),
  };
}

/** A copy of `c` for the same event, that the receiver must refuse for the reason `twin` names. */
function twinOf(c: ValidCase, twin: Twin, socket: boolean): Case {
  const payload = JSON.parse(c.body.toString()) as Payload;
  const resign = (body: Buffer | string, header = sign(body, SECRET)): Case => ({
    ...c,
    body: Buffer.from(body),
    headers: c.headers.map(([n, v]) => [n, /^x-service-signature$/i.test(n) ? header : v]),
    validSignature: header === sign(body, SECRET),
  });
  switch (twin) {
    case 'unsigned':
      return { ...c, headers: c.headers.filter(([n]) => !/^x-service-signature$/i.test(n)), validSignature: false };
    case 'other-secret':
      return resign(c.body, sign(c.body, 'whsec_other'));
    case 'well-formed':
      return resign(c.body, `sha256=${'ab'.repeat(32)}`);
    case 'tampered':
      return resign(JSON.stringify({ ...payload, amount: payload.amount === '1.00' ? '2.00' : '1.00' }), sign(c.body, SECRET));
    case 'invalid':
      return resign(JSON.stringify({ ...payload, amount: Number(payload.amount) }));
    case 'get':
      return { ...c, method: 'GET' };
    case 'too-large':
      return resign(Buffer.concat([c.body, Buffer.alloc(MAX_BODY, 0x20)]));
    case 'cut':
      // Over a socket, a Content-Length that ends before the body does; in process, the bytes cut short.
      return socket ? { ...c, lie: 'short', validSignature: false } : resign(c.body.subarray(0, c.body.length >> 1), sign(c.body, SECRET));
  }
}

let planRuns = 0;

/**
 * Send a plan to `t`. Hostile cases are checked as above. A valid delivery, after its twin if it has
 * one, gets 200 `processed` the first time its event arrives and 200 `duplicate` after, and the
 * handler has run exactly once for the event, whatever came before it.
 */
export async function sendPlan(t: Target, via: string, send: (c: Case) => Promise<Answer>, plan: Step[], socket: boolean): Promise<void> {
  const run = ++planRuns;
  const sent: ValidCase[] = [];
  const ran = (key: string) => t.counted.runs.get(key) ?? 0;
  for (const step of plan) {
    const { calls, threw } = t.counted;
    if (step.kind === 'hostile') {
      check(via, step.c, await send(step.c), t.counted.calls - calls, t.counted.threw - threw, socket);
      continue;
    }
    if (step.kind === 'again' && sent.length === 0) continue;
    const c = step.kind === 'again' ? sent[step.pick % sent.length]! : validCase(step.v, run);
    const seen = sent.some((s) => s.key === c.key);
    const where = `${via}: ${c.headers.map(([n, v]) => `${n}: ${v}`).join(' | ')} body ${c.body.toString()}`;
    if (step.kind === 'valid' && step.v.twin) {
      const twin = twinOf(c, step.v.twin, socket);
      const answer = await send(twin);
      check(`${via} (${step.v.twin} copy)`, twin, answer, t.counted.calls - calls, t.counted.threw - threw, socket);
      if (step.v.twin === 'invalid') expect(answer.status, `${where}: a signed copy that breaks the schema`).toBe(400);
      expect(ran(c.key), `${where}: a refused ${step.v.twin} copy ran the handler`).toBe(seen ? 1 : 0);
    }
    if (step.kind === 'valid') sent.push(c);
    const answer = await send(c);
    expect(`${answer.status} ${answer.text}`, `${where}: a valid delivery was not taken`).toBe(
      `200 {"outcome":"${seen ? 'duplicate' : 'processed'}"}`,
    );
    expect(ran(c.key), `${where}: the handler did not run exactly once for the event`).toBe(1);
  }
}
