import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '@payhook/core';
import { createEvent, signedBody } from '@payhook/testing';
import { send, type Served } from './http.js';
import { SCENARIO, type LogLine } from './next-app/lib/scenario.js';

/** How one adapter is served for the suite. Every server runs `scenarioReceiver(logFile)`. */
export interface AdapterUnderTest {
  /** The webhook route mounted as the adapter's docs say; `url` is the route. */
  start(logFile: string): Promise<Served>;
  /** The framework's JSON body parser in front, as in an app that parses JSON elsewhere. */
  parserFirst: {
    /** `echoUrl` is another route of the same app, answering `{ parsed: <the body its parser parsed> }`. */
    start(logFile: string): Promise<Served & { echoUrl: string }>;
    /** `fix`: deliveries get 500 at once and this in the logged error. 'verifies': the adapter's scope still sees raw bytes. */
    expect: { fix: RegExp } | 'verifies';
  };
  /** The parser in front, told to keep the raw bytes for payhook (Express's `req.rawBody`). */
  keepingBytes?(logFile: string): Promise<Served>;
}

const [current, previous] = SCENARIO.secrets;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogLine);
}
const runsOf = (file: string, reference: string) =>
  readLog(file).filter((l): l is Extract<LogLine, { kind: 'run' }> => l.kind === 'run' && l.reference === reference);
const reportsOf = (file: string, where: (r: Extract<LogLine, { kind: 'report' }>) => boolean) =>
  readLog(file).filter((l): l is Extract<LogLine, { kind: 'report' }> => l.kind === 'report' && where(l));

async function waitFor<T>(read: () => T, ok: (value: T) => boolean, ms = 5_000): Promise<T> {
  for (const until = Date.now() + ms; ; await sleep(25)) {
    const value = read();
    if (ok(value) || Date.now() > until) return value;
  }
}

function server(start: (logFile: string) => Promise<Served>) {
  const at = { url: '', logFile: '', served: undefined as Served | undefined };
  beforeAll(async () => {
    at.logFile = join(mkdtempSync(join(tmpdir(), 'payhook-adapter-')), 'log.jsonl');
    at.served = await start(at.logFile);
    at.url = at.served.url;
  }, 60_000);
  afterAll(() => at.served?.close());
  return at;
}

/** Every row of the status policy, over real HTTP, against one adapter. */
export function adapterConformance(name: string, adapter: AdapterUnderTest): void {
  describe(`${name} adapter`, () => {
    const s = server(adapter.start);
    const deliver = (event: object | string, secret: string = current!) => {
      const body = typeof event === 'string' ? event : JSON.stringify(event);
      const { headers } = signedBody(body, { secret });
      return send(s.url, { headers, body });
    };

    it('runs a valid delivery once and answers 200; the same bytes again answer 200 and run nothing', async () => {
      const event = createEvent('payment.success');
      const first = await deliver(event);
      expect([first.status, JSON.parse(first.text)]).toEqual([200, { outcome: 'processed' }]);
      expect(first.headers['content-type']).toMatch(/^application\/json/);
      const again = await deliver(event);
      expect([again.status, JSON.parse(again.text)]).toEqual([200, { outcome: 'duplicate' }]);
      expect(runsOf(s.logFile, event.reference)).toMatchObject([{ event: 'payment.success', attempt: 1 }]);
    });

    it('runs success, refunding and refunded of one reference: three events, three runs', async () => {
      const { reference } = createEvent('payment.success');
      for (const event of ['payment.success', 'payment.refunding', 'payment.refunded'] as const) {
        expect((await deliver(createEvent(event, { reference }))).status).toBe(200);
      }
      expect(runsOf(s.logFile, reference).map((r) => r.event)).toEqual(['payment.success', 'payment.refunding', 'payment.refunded']);
    });

    describe('answers 401 and runs nothing', () => {
      const event = createEvent('payment.success');
      const body = JSON.stringify(event);
      const good = sign(body, current!);
      it.each<[string, Record<string, string | string[]>]>([
        ['without a signature', {}],
        ['to a signature with another secret', { 'x-service-signature': sign(body, 'whsec_someone_else') }],
        ['to a malformed signature', { 'x-service-signature': 'sha256=abc' }],
        ['to upper-case hex digits', { 'x-service-signature': `sha256=${good.slice(7).toUpperCase()}` }],
        ['to a duplicated signature header', { 'x-service-signature': [good, good] }],
      ])('%s', async (_, signature) => {
        const res = await send(s.url, { headers: { 'content-type': 'application/json', ...signature }, body });
        expect([res.status, JSON.parse(res.text)]).toEqual([401, { outcome: 'unauthorized' }]);
        expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
      });

      it('to a valid signature over a re-serialised body', async () => {
        const original = JSON.stringify(event, null, 2);
        const res = await send(s.url, {
          headers: { 'content-type': 'application/json', 'x-service-signature': sign(original, current!) },
          body: JSON.stringify(JSON.parse(original)),
        });
        expect(res.status).toBe(401);
        expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
      });
    });

    it.each([
      ['malformed JSON', '{"event": "payment.success",'],
      ['a payload that is not an event', JSON.stringify({ event: 'payment.success', reference: 'txn_not_an_event' })],
    ])('answers 400 to %s under a valid signature', async (_, body) => {
      const res = await deliver(body);
      expect([res.status, JSON.parse(res.text)]).toEqual([400, { outcome: 'malformed' }]);
    });

    it('answers 405 with Allow: POST to GET', async () => {
      const res = await send(s.url, { method: 'GET' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
    });

    it('answers 200 to an event the service does not define, running nothing', async () => {
      const event = { ...createEvent('payment.success'), event: 'payment.teleported' };
      const res = await deliver(event);
      expect([res.status, JSON.parse(res.text)]).toEqual([200, { outcome: 'ignored' }]);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
    });

    it('answers 500 when a handler throws, without its error text, and runs it again on redelivery', async () => {
      const event = createEvent('payment.success', { merchantReference: 'throw-once' });
      const first = await deliver(event);
      expect([first.status, JSON.parse(first.text)]).toEqual([500, { outcome: 'failed' }]);
      const retry = await deliver(event);
      expect([retry.status, JSON.parse(retry.text)]).toEqual([200, { outcome: 'processed' }]);
      expect(runsOf(s.logFile, event.reference).map((r) => r.attempt)).toEqual([1, 2]);
    });

    it('answers 200 to a NonRetriableError, reports it, and does not run it again', async () => {
      const event = createEvent('payment.success', { merchantReference: 'reject' });
      expect(JSON.parse((await deliver(event)).text)).toEqual({ outcome: 'rejected' });
      expect((await deliver(event)).status).toBe(200);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(1);
      expect(reportsOf(s.logFile, (r) => r.reference === event.reference && r.outcome === 'rejected')[0]?.error).toBe('planned rejection');
    });

    it('answers 413 to a signed body over maxBodyBytes, and runs nothing', async () => {
      const event = createEvent('payment.success', { customer: { name: 'x'.repeat(SCENARIO.maxBodyBytes), email: 'a@example.com', phone: '251911234567' } });
      const res = await deliver(event);
      expect([res.status, JSON.parse(res.text)]).toEqual([413, { outcome: 'too-large' }]);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
    });

    it('answers 413 to a chunked body without Content-Length, counting the bytes', async () => {
      const chunks = Array.from({ length: 20 }, () => Buffer.alloc(SCENARIO.maxBodyBytes / 8, 0x20));
      const res = await send(s.url, { headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${'0'.repeat(64)}` }, chunks });
      expect(res.status).toBe(413);
    });

    it('accepts a chunked delivery under the limit', async () => {
      const event = createEvent('payment.success');
      const { body, headers } = signedBody(event, { secret: current! });
      const bytes = Buffer.from(body);
      const res = await send(s.url, { headers, chunks: [bytes.subarray(0, 100), bytes.subarray(100)] });
      expect(res.status).toBe(200);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(1);
    });

    it('runs 20 concurrent duplicates once, answering none of them 5xx', async () => {
      const event = createEvent('payment.success', { merchantReference: 'hold' });
      const statuses = (await Promise.all(Array.from({ length: 20 }, () => deliver(event)))).map((r) => r.status);
      expect(statuses.every((code) => code === 200 || code === 409)).toBe(true);
      expect(statuses).toContain(200);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(1);
    });

    it('answers 202 at the budget, 409 while the handler runs, and records its outcome for the redelivery', async () => {
      const event = createEvent('payment.success', { merchantReference: 'slow' });
      const first = await deliver(event);
      expect([first.status, JSON.parse(first.text)]).toEqual([202, { outcome: 'accepted' }]);
      expect(first.ms).toBeGreaterThanOrEqual(SCENARIO.budgetMs - 50);
      expect(first.ms).toBeLessThan(SCENARIO.slowMs);
      expect((await deliver(event)).status).toBe(409);
      const late = await waitFor(
        () => reportsOf(s.logFile, (r) => r.reference === event.reference && r.late === true),
        (found) => found.length > 0,
      );
      expect(late).toMatchObject([{ outcome: 'processed', status: 200 }]);
      expect(JSON.parse((await deliver(event)).text)).toEqual({ outcome: 'duplicate' });
      expect(runsOf(s.logFile, event.reference)).toHaveLength(1);
    });

    it('accepts the previous secret during a rotation, and says which one matched', async () => {
      const old = createEvent('payment.success');
      const now = createEvent('payment.success');
      expect((await deliver(old, previous)).status).toBe(200);
      expect((await deliver(now, current)).status).toBe(200);
      expect(runsOf(s.logFile, old.reference)).toMatchObject([{ secretIndex: 1 }]);
      expect(runsOf(s.logFile, now.reference)).toMatchObject([{ secretIndex: 0 }]);
    });

    describe('with the framework\'s JSON body parser mounted first', () => {
      const p = server(adapter.parserFirst.start);
      const echoUrl = () => (p.served as Served & { echoUrl: string }).echoUrl;
      const { expect: expected } = adapter.parserFirst;

      it('the app still parses JSON on its other routes', async () => {
        const res = await send(echoUrl(), { headers: { 'content-type': 'application/json' }, body: '{"hello": "world"}' });
        expect([res.status, JSON.parse(res.text)]).toEqual([200, { parsed: { hello: 'world' } }]);
      });

      if (expected === 'verifies') {
        it('the webhook route still verifies the raw bytes', async () => {
          const event = createEvent('payment.success');
          const body = JSON.stringify(event, null, 2);
          const { headers } = signedBody(body, { secret: current! });
          expect((await send(p.url, { headers, body })).status).toBe(200);
          expect((await send(p.url, { headers, body: JSON.stringify(event) })).status).toBe(401);
          expect(runsOf(p.logFile, event.reference)).toHaveLength(1);
        });
      } else {
        it('a delivery gets 500 at once, never 2xx, and the logged error names the fix', async () => {
          const event = createEvent('payment.success');
          const body = JSON.stringify(event, null, 2);
          const { headers } = signedBody(body, { secret: current! });
          for (let attempt = 0; attempt < 2; attempt++) {
            const res = await send(p.url, { headers, body });
            expect([res.status, JSON.parse(res.text)]).toEqual([500, { outcome: 'body-unavailable' }]);
            expect(res.ms).toBeLessThan(2_000);
          }
          const errors = reportsOf(p.logFile, (r) => r.outcome === 'body-unavailable').map((r) => r.error);
          expect(errors).toHaveLength(2);
          expect(errors[0]).toMatch(expected.fix);
          expect(runsOf(p.logFile, event.reference)).toHaveLength(0);
        });
      }
    });

    const { keepingBytes } = adapter;
    if (keepingBytes) {
      describe('with a body parser that keeps the raw bytes', () => {
        const k = server(keepingBytes);
        it('verifies the kept bytes, never the parsed body', async () => {
          const event = createEvent('payment.success');
          const body = JSON.stringify(event, null, 2);
          const { headers } = signedBody(body, { secret: current! });
          expect((await send(k.url, { headers, body })).status).toBe(200);
          expect((await send(k.url, { headers, body: JSON.stringify(event) })).status).toBe(401);
          expect(JSON.parse((await send(k.url, { headers, body })).text)).toEqual({ outcome: 'duplicate' });
          expect(runsOf(k.logFile, event.reference)).toHaveLength(1);
        });
      });
    }
  });
}
