import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createReceiver, createVerifier, sign, type Receiver } from '@payhook/core';
import { EVENT_NAMES } from '@payhook/core/lifecycle';
import { createDiagnosis } from '../../packages/core/src/observing/diagnose.js';
import { toNodeListener } from '@payhook/core/node';
import { payhookExpress } from '@payhook/express';
import { payhookFastify } from '@payhook/fastify';
import { payhookHono } from '@payhook/hono';
import { payhookNext, payhookPages } from '@payhook/next';
import express from 'express';
import fc from 'fast-check';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent } from '@payhook/testing';
import { buildNextExample, freePort, startExample, type RunningExample } from '@payhook/test-support/apps/examples';

/**
 * Fuzz of the receiver through every adapter: random and hostile bodies and headers. Whatever
 * arrives: no crash, no 5xx except the documented 500 of a handler that threw, no handler run
 * without a valid signature over the exact bytes, and Object.prototype untouched. And the other
 * way round: valid deliveries, among hostile ones, get 200 and run the handler once per event.
 *
 * CI runs 10,000+ cases (most in process, a share over real sockets per adapter);
 * `PAYHOOK_FUZZ_RUNS=200000 npx vitest run test/security/fuzz.test.ts` runs more, in the same shares.
 */
const TOTAL = Number(process.env.PAYHOOK_FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.PAYHOOK_FUZZ_SEED ?? 20261122);
const SECRET = 'whsec_fuzz_secret_value';
const MAX_BODY = 16 * 1024;
const runs = (share: number) => Math.max(50, Math.round(TOTAL * share));

// ---------------------------------------------------------------- the receivers under test

interface Counted {
  receiver: Receiver;
  /** Handler runs since the last reset. */
  calls: number;
  /** Handler runs that threw (answered 500 `failed`). */
  threw: number;
  /** Handler runs per event, by the service's identity of an event: mode, reference and name. */
  runs: Map<string, number>;
}

const eventKey = (e: { mode: string; reference: string; event: string }) => `${e.mode}:${e.reference}:${e.event}`;

function counted(): Counted {
  const c: Counted = { receiver: undefined as unknown as Receiver, calls: 0, threw: 0, runs: new Map() };
  // Nothing here is ever in progress when the receiver works (one delivery at a time, handlers that
  // return at once); if a refused copy left its event claimed, the next delivery gets 409 at once
  // instead of waiting out the 8 s budget for each example fast-check tries.
  const options = { secret: SECRET, maxBodyBytes: MAX_BODY, onInProgress: 'retry', logger: { warn() {}, error() {} } } as const;
  c.receiver = createReceiver(options).onAny((event) => {
    c.calls++;
    c.runs.set(eventKey(event), (c.runs.get(eventKey(event)) ?? 0) + 1);
    if (event.merchantReference === 'throw') {
      c.threw++;
      throw new Error('planned handler failure');
    }
  });
  return c;
}

// ---------------------------------------------------------------- the inputs

interface Case {
  method: string;
  /** Header lines as sent; names may be upper-case, a name may repeat. */
  headers: [string, string][];
  body: Buffer;
  /** Exactly one signature header, whose value is the HMAC of exactly these bytes. */
  validSignature: boolean;
  /** The body carries a `__proto__` / `constructor.prototype` key (in some spelling). */
  pollutes: boolean;
  /** The body is not valid UTF-8. */
  badUtf8: boolean;
  /** Split points for a chunked upload over a socket. */
  chunks: number[];
  /** Over a socket: send a Content-Length that is shorter or longer than the body. */
  lie: 'none' | 'short' | 'long';
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

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

type BodyKind = Pick<Case, 'body' | 'pollutes' | 'badUtf8'>;

const merchantReference = fc.constantFrom('ok', 'ok', 'ok', 'throw', 'order-1');

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

const bodyArb: fc.Arbitrary<BodyKind> = fc.oneof(
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

type SignatureKind =
  | 'valid'
  | 'upper-name'
  | 'missing'
  | 'upper-hex'
  | 'upper-prefix'
  | 'short'
  | 'long'
  | 'duplicate'
  | 'duplicate-mixed'
  | 'other-secret'
  | 'random'
  | 'empty'
  | 'sha1'
  | 'other-body'
  | 'well-formed';

const signatureArb = fc.constantFrom<SignatureKind>(
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'upper-name',
  'upper-name',
  'well-formed',
  'well-formed',
  'well-formed',
  'missing',
  'upper-hex',
  'upper-prefix',
  'short',
  'long',
  'duplicate',
  'duplicate-mixed',
  'other-secret',
  'random',
  'empty',
  'sha1',
  'other-body',
);

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    method: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'post'),
    body: bodyArb,
    signature: signatureArb,
    random: printable,
    hex: fc.stringMatching(/^[0-9a-f]{64}$/),
    contentType: fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=latin1',
    ),
    extra: fc.array(fc.tuple(fc.constantFrom('x-forwarded-for', 'x-custom', 'accept', 'x-service-signature-2', 'X-Payhook'), printable), {
      maxLength: 3,
    }),
    chunks: fc.array(fc.nat(), { maxLength: 6 }),
    lie: fc.constantFrom<Case['lie']>('none', 'none', 'none', 'none', 'none', 'none', 'short', 'long'),
  })
  .map(({ method, body, signature, random, hex, contentType, extra, chunks, lie }) => {
    const good = sign(body.body, SECRET);
    const name = 'x-service-signature';
    const headers: [string, string][] = [];
    if (contentType) headers.push(['content-type', contentType]);
    const sig: Record<SignatureKind, [string, string][]> = {
      valid: [[name, good]],
      'upper-name': [['X-SERVICE-SIGNATURE', good]],
      missing: [],
      'upper-hex': [[name, `sha256=${good.slice(7).toUpperCase()}`]],
      'upper-prefix': [[name, `SHA256=${good.slice(7)}`]],
      short: [[name, good.slice(0, 20)]],
      long: [[name, `${good}00`]],
      duplicate: [
        [name, good],
        [name, good],
      ],
      'duplicate-mixed': [
        [name, good],
        ['X-Service-Signature', sign(body.body, 'whsec_other')],
      ],
      'other-secret': [[name, sign(body.body, 'whsec_other')]],
      random: [[name, random.trim() || 'x']],
      empty: [[name, '']],
      sha1: [[name, `sha1=${good.slice(7, 47)}`]],
      'other-body': [[name, sign(Buffer.concat([body.body, Buffer.from(' ')]), SECRET)]],
      // The service's exact form, any digest: what a stranger without the secret sends.
      'well-formed': [[name, `sha256=${hex}`]],
    };
    headers.push(...sig[signature], ...extra.map(([n, v]) => [n, v.trim() || 'x'] as [string, string]));
    return {
      // Failure reports print this summary, not every byte of a huge body.
      [fc.toStringMethod]: () =>
        `${method} ${JSON.stringify(headers)} body(${body.body.length} B, base64 head) ${body.body.subarray(0, 512).toString('base64')} chunks ${JSON.stringify(chunks)} lie ${lie}`,
      method,
      headers,
      body: body.body,
      pollutes: body.pollutes,
      badUtf8: body.badUtf8,
      validSignature: signature === 'valid' || signature === 'upper-name',
      chunks: [...new Set(chunks.map((c) => c % (body.body.length + 1)))].sort((a, b) => a - b),
      lie,
    };
  });

// ---------------------------------------------------------------- the oracle

interface Answer {
  status: number | null;
  text: string;
}

const ALLOWED = new Set([200, 202, 400, 401, 405, 409, 413]);

/** Check one answer against the rules; `via` names the adapter for the failure message. */
function check(via: string, c: Case, answer: Answer, ran: number, thrown: number, socket = false, maxBody = MAX_BODY): void {
  const where = `${via}: ${c.method} ${c.headers.map(([n, v]) => `${n}: ${v.slice(0, 24)}`).join(' | ')} body ${c.body.length} B ${JSON.stringify(c.body.subarray(0, 60).toString('latin1'))}`;
  // Over a socket, a lying Content-Length or an oversized upload may end in a closed connection instead of an answer.
  if (answer.status === null) {
    if (socket && (c.lie !== 'none' || c.body.length > maxBody)) {
      expect(ran, `${where}: a handler ran for a delivery that got no answer`).toBe(0);
      return;
    }
    throw new Error(`${where}: no answer`);
  }
  if (answer.status === 500) {
    expect([answer.text, thrown], `${where}: a 500 that is not a handler error`).toEqual(['{"outcome":"failed"}', 1]);
  } else if (!(socket && answer.status === 400 && c.lie !== 'none')) {
    expect(ALLOWED.has(answer.status), `${where}: answered ${answer.status} ${answer.text}`).toBe(true);
  }
  if (ran > 0)
    expect(c.validSignature && c.method.toUpperCase() === 'POST', `${where}: a handler ran without a valid signature`).toBe(true);
  expect(ran, `${where}: more than one handler run for one delivery`).toBeLessThanOrEqual(1);
  if (c.lie !== 'none' && socket) return;
  // Fastify checks its bodyLimit before the route runs: an oversized body gets 413 whatever the method.
  if (c.method.toUpperCase() !== 'POST')
    return void expect(c.body.length > maxBody && via.startsWith('fastify') ? [405, 413] : [405], where).toContain(answer.status);
  if (c.body.length > maxBody) return void expect(answer.status, where).toBe(413);
  if (!c.validSignature) return void expect(answer.status, where).toBe(401);
  if (c.pollutes || c.badUtf8) expect(answer.status, where).toBe(400);
}

function prototypeSnapshot() {
  return [Object.getOwnPropertyNames(Object.prototype).sort().join(','), ({} as { polluted?: unknown }).polluted];
}

// ---------------------------------------------------------------- valid deliveries, among hostile ones

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
const planArb = fc
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
async function sendPlan(t: Target, via: string, send: (c: Case) => Promise<Answer>, plan: Step[], socket: boolean): Promise<void> {
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

// ---------------------------------------------------------------- transports

/** In process: a web Request (core, Hono, Next App Router). Headers join a repeated name with ", ", as HTTP does. */
function toRequest(c: Case): Request {
  const headers = new Headers();
  for (const [n, v] of c.headers) headers.append(n, v);
  const method = c.method.toUpperCase();
  return new Request('http://127.0.0.1/webhooks', { method, headers, body: method === 'GET' ? undefined : new Uint8Array(c.body) });
}

const fromResponse = async (res: Response): Promise<Answer> => ({ status: res.status, text: await res.text() });

/** A live server on 127.0.0.1:0; `agent` keeps connections alive across cases. */
async function serve(server: http.Server): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Over a kept-alive connection with node:http (a repeated header goes out as separate lines). */
function viaAgent(port: number, c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {};
    for (const [n, v] of c.headers) {
      const key = n.toLowerCase();
      const had = headers[key];
      headers[key] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
    }
    // node:http frames a GET or DELETE body only when told its length; unframed, the bytes would read as a next request.
    headers['content-length'] = String(c.body.length);
    const req = http.request(
      { host: '127.0.0.1', port, path: '/webhooks', method: c.method.toUpperCase(), headers, agent: keepAlive },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(parts).toString() }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve({ status: null, text: '' }) : reject(e),
    );
    req.end(c.body);
  });
}

/**
 * One raw HTTP/1.1 exchange on a fresh socket: header names exactly as given (upper-case,
 * repeated), the body chunked at `c.chunks` or with a lying Content-Length.
 */
function viaSocket(port: number, c: Case, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      let rest = split < 0 ? '' : text.slice(split + 4);
      if (/\r\ntransfer-encoding: chunked/i.test(text.slice(0, split))) rest = dechunk(rest);
      resolve({ status: m ? Number(m[1]) : null, text: rest });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('close', finish);
    socket.on('error', () => {});
    const chunked = c.chunks.length > 0 && c.lie === 'none';
    const length = c.lie === 'short' ? Math.max(0, c.body.length - 5) : c.lie === 'long' ? c.body.length + 50 : c.body.length;
    const head = [
      `${c.method.toUpperCase()} /webhooks HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
      ...c.headers.map(([n, v]) => `${n}: ${v}`),
    ];
    head.push(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`);
    const pieces: Buffer[] = [Buffer.from(`${head.join('\r\n')}\r\n\r\n`)];
    if (chunked) {
      let at = 0;
      for (const cut of [...c.chunks, c.body.length]) {
        if (cut <= at) continue;
        const part = c.body.subarray(at, cut);
        pieces.push(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
        at = cut;
      }
      pieces.push(Buffer.from('0\r\n\r\n'));
    } else {
      pieces.push(c.body);
    }
    let i = 0;
    const next = () => {
      if (done || socket.destroyed) return;
      if (i === pieces.length) {
        // A longer declared length than sent: the client gives up sending; the server must not wait forever.
        if (c.lie === 'long') socket.end();
        return;
      }
      socket.write(pieces[i++]!, () => setImmediate(next));
    };
    socket.once('connect', next);
  });
}

/** A chunked response body, decoded. */
function dechunk(text: string): string {
  let out = '';
  for (let at = 0; ; ) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

// ---------------------------------------------------------------- the adapters

interface Target {
  name: string;
  counted: Counted;
  /** In process (or over one kept-alive connection): most of the cases. */
  inProcess?: (c: Case) => Promise<Answer>;
  /** A real server for raw sockets. */
  port?: number;
  close?: () => Promise<void>;
}

const targets: Record<string, Target> = {};

beforeAll(async () => {
  // core: receiver.handle(Request), and its Node bridge on a real server.
  const core = counted();
  const coreServer = await serve(http.createServer(toNodeListener(core.receiver)));
  targets.core = {
    name: 'core',
    counted: core,
    inProcess: async (c) => fromResponse(await core.receiver.handle(toRequest(c))),
    ...coreServer,
  };

  // Hono: app.fetch in process; on a socket through @hono/node-server, as the example serves it.
  const hono = counted();
  const honoApp = new Hono();
  honoApp.all('/webhooks', payhookHono(hono.receiver));
  const honoServer = await serve(http.createServer(getRequestListener(honoApp.fetch)));
  targets.hono = { name: 'hono', counted: hono, inProcess: async (c) => fromResponse(await honoApp.fetch(toRequest(c))), ...honoServer };

  // Fastify: inject in process; listen for sockets.
  const fastify = counted();
  const fastifyApp = Fastify();
  await fastifyApp.register(payhookFastify, { receiver: fastify.receiver, path: '/webhooks' });
  const address = await fastifyApp.listen({ port: 0, host: '127.0.0.1' });
  targets.fastify = {
    name: 'fastify',
    counted: fastify,
    inProcess: async (c) => {
      const headers: Record<string, string | string[]> = {};
      for (const [n, v] of c.headers) {
        const had = headers[n.toLowerCase()];
        headers[n.toLowerCase()] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
      }
      const method = c.method.toUpperCase() as 'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE';
      const res = await fastifyApp.inject({ method, url: '/webhooks', headers, payload: method === 'GET' ? undefined : c.body });
      return { status: res.statusCode, text: res.body };
    },
    port: Number(new URL(address).port),
    close: () => fastifyApp.close(),
  };

  // Express: a live server, one kept-alive connection for the bulk, fresh sockets for the rest.
  const ex = counted();
  const expressApp = express();
  expressApp.all('/webhooks', payhookExpress(ex.receiver));
  expressApp.use(express.json());
  const expressServer = await serve(http.createServer(expressApp));
  targets.express = { name: 'express', counted: ex, inProcess: (c) => viaAgent(expressServer.port, c), ...expressServer };

  // Next: the App Router handler in process (a web Request, as Next passes it); the Pages Router
  // handler on a live Node server (Next's pages API hands it Node's req and res).
  const nextApp = counted();
  const { POST, GET, PUT, PATCH, DELETE } = payhookNext(nextApp.receiver);
  const byMethod: Record<string, (r: Request) => Promise<Response>> = { POST, GET, PUT, PATCH, DELETE };
  targets['next app router'] = {
    name: 'next app router',
    counted: nextApp,
    inProcess: async (c) => fromResponse(await byMethod[c.method.toUpperCase()]!(toRequest(c))),
  };
  const pages = counted();
  const pagesServer = await serve(http.createServer(payhookPages(pages.receiver)));
  targets['next pages router'] = {
    name: 'next pages router',
    counted: pages,
    inProcess: (c) => viaAgent(pagesServer.port, c),
    ...pagesServer,
  };
});

afterAll(async () => {
  keepAlive.destroy();
  for (const t of Object.values(targets)) await t.close?.();
});

// In-process shares add up to 90% of TOTAL; sockets take 10%, split over the five servers.
const IN_PROCESS: [string, number][] = [
  ['core', 0.25],
  ['hono', 0.15],
  ['fastify', 0.15],
  ['next app router', 0.15],
  ['express', 0.12],
  ['next pages router', 0.08],
];
const SOCKETS = ['core', 'hono', 'fastify', 'express', 'next pages router'];

describe(`receiver fuzz (seed ${SEED}, ${TOTAL} cases)`, () => {
  const before = prototypeSnapshot();

  describe.each(IN_PROCESS)('%s in process', (name, share) => {
    it(`${runs(share)} cases: no crash, no unexpected 5xx, no handler without a valid signature`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const { calls, threw } = t.counted;
          const answer = await t.inProcess!(c);
          check(name, c, answer, t.counted.calls - calls, t.counted.threw - threw);
        }),
        { seed: SEED, numRuns: runs(share) },
      );
      expect(t.counted.calls).toBeGreaterThan(0);
    }, 300_000);

    it(`${runs(share / 5)} plans of valid deliveries among hostile ones: each answered 200, each event handled once`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(planArb, (plan) => sendPlan(t, name, t.inProcess!, plan, false)),
        { seed: SEED + 4, numRuns: runs(share / 5) },
      );
    }, 300_000);
  });

  describe.each(SOCKETS)('%s over raw sockets', (name) => {
    it(`${runs(0.02)} cases: upper-case and repeated header lines, chunked bodies, lying Content-Length`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const { calls, threw } = t.counted;
          const answer = await viaSocket(t.port!, c);
          check(`${name} socket`, c, answer, t.counted.calls - calls, t.counted.threw - threw, true);
        }),
        { seed: SEED + 1, numRuns: runs(0.02) },
      );
    }, 300_000);

    it(`${runs(0.01)} plans of valid deliveries among hostile ones, chunked and in any header case: each answered 200, each event handled once`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(planArb, (plan) => sendPlan(t, `${name} socket`, (c) => viaSocket(t.port!, c), plan, true)),
        { seed: SEED + 5, numRuns: runs(0.01) },
      );
    }, 300_000);

    it('a 20 MiB chunked upload is cut off with 413 (or a closed connection) quickly, and the server still serves', async () => {
      const t = targets[name]!;
      const started = performance.now();
      const body = Buffer.alloc(20 * 1024 * 1024, 0x20);
      const answer = await viaSocket(t.port!, {
        method: 'POST',
        headers: [['x-service-signature', sign(body, SECRET)]],
        body,
        validSignature: true,
        pollutes: false,
        badUtf8: false,
        chunks: Array.from({ length: 40 }, (_, i) => (i + 1) * 512 * 1024),
        lie: 'none',
      });
      expect([413, null]).toContain(answer.status);
      expect(performance.now() - started).toBeLessThan(5_000);
      const event = JSON.stringify(createEvent('payment.success'));
      const ok = await viaSocket(t.port!, {
        method: 'POST',
        headers: [['x-service-signature', sign(event, SECRET)]],
        body: Buffer.from(event),
        validSignature: true,
        pollutes: false,
        badUtf8: false,
        chunks: [],
        lie: 'none',
      });
      expect(ok.status).toBe(200);
    }, 30_000);
  });

  describe('the Next example under `next start`, over raw sockets', () => {
    let app: RunningExample | undefined;
    beforeAll(async () => {
      await buildNextExample();
      const port = await freePort();
      // The example only receives here; its client is never called.
      app = await startExample(
        'next',
        {
          PORT: String(port),
          PAYHOOK_BASE_URL: 'http://127.0.0.1:9',
          PAYHOOK_API_KEY: 'sk_test_fuzz_unused_key',
          PAYHOOK_WEBHOOK_SECRET: SECRET,
        },
        240_000,
      );
    }, 300_000);
    afterAll(() => app?.stop());

    /** Handler runs so far, seen through the example's own orders (the fuzz's merchant references). */
    const handled = async () => {
      let n = 0;
      for (const mr of ['ok', 'throw', 'order-1']) {
        const order = (await (await fetch(`${app!.url}/orders/${mr}`)).json()) as { events?: string[] };
        n += order.events?.length ?? 0;
      }
      return n;
    };

    it(`${runs(0.01)} cases through Next's own server: no crash, no 5xx, no handler without a valid signature`, async () => {
      const port = Number(new URL(app!.url).port);
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const before = await handled();
          const answer = await viaSocket(port, c);
          // Its handler never throws: no 500 is allowed at all (thrown = 0). Its body limit is the default 1 MiB.
          check('next example socket', c, answer, (await handled()) - before, 0, true, 1024 * 1024);
        }),
        { seed: SEED + 2, numRuns: runs(0.01) },
      );
      expect(await handled()).toBeGreaterThan(0);
    }, 300_000);
  });

  it(`${runs(0.05)} hostile bodies through the signature diagnosis, its budget never spent: it never throws and never says more than mismatch`, async () => {
    // The receiver examines 5 refusals a minute; here every call is in a minute of its own.
    let minute = 0;
    const verify = createVerifier(SECRET);
    const diagnose = createDiagnosis({ secrets: [SECRET], mode: 'live', verify, now: () => (minute += 60_000) });
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.stringMatching(/^[0-9a-f]{64}$/), async ({ body }, hex) => {
        const d = await diagnose({ ok: false, reason: 'mismatch' }, { body, header: `sha256=${hex}` });
        expect(d.reason).toBe('mismatch');
        for (const hint of d.hints ?? []) expect(['re-serialised', 'mode']).toContain(hint);
      }),
      { seed: SEED + 3, numRuns: runs(0.05) },
    );
  });

  it('Object.prototype is unchanged after every case', () => {
    expect(prototypeSnapshot()).toEqual(before);
    expect(before[1]).toBeUndefined();
  });
});
