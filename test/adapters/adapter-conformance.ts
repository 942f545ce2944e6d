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
  /** The webhook route mounted as the adapter's docs say; `url` is the route. `signatureHeader` is the receiver's option. */
  start(logFile: string, signatureHeader?: string): Promise<Served>;
  /** The framework's JSON body parser in front, as in an app that parses JSON elsewhere. */
  parserFirst: {
    /** `echoUrl` is another route of the same app, answering `{ parsed: <the body its parser parsed> }`. */
    start(logFile: string): Promise<Served & { echoUrl: string }>;
    /** `fix`: deliveries get 500 at once and this in the logged error. 'verifies': the adapter's scope still sees raw bytes. */
    expect: { fix: RegExp } | 'verifies';
  };
  /**
   * The platform's receiver (`scenarioReceiver(logFile, undefined, true)`, many accounts) mounted
   * with the account in the route's last segment, as the adapter's docs say; `url` is the route
   * without that segment (`…/webhooks/epay`).
   */
  platform(logFile: string): Promise<Served>;
  /** The parser in front, told to keep the raw bytes for payhook (Express's `req.rawBody`). */
  keepingBytes?(logFile: string): Promise<Served>;
}

const [current] = SCENARIO.secrets;

function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
}
const runsOf = (file: string, reference: string) =>
  readLog(file).filter((l): l is Extract<LogLine, { kind: 'run' }> => l.kind === 'run' && l.reference === reference);
const reportsOf = (file: string, where: (r: Extract<LogLine, { kind: 'report' }>) => boolean) =>
  readLog(file).filter((l): l is Extract<LogLine, { kind: 'report' }> => l.kind === 'report' && where(l));

/** A signed event's JSON padded with spaces (JSON allows them after the value) to exactly `bytes` bytes. */
function sized(bytes: number) {
  const event = createEvent('payment.success');
  const json = JSON.stringify(event);
  return { event, body: json + ' '.repeat(bytes - Buffer.byteLength(json)) };
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

/**
 * What an adapter does, over real HTTP against the real framework: read the exact bytes (streamed,
 * chunked, counted against the limit), cope with a body already read or parsed, pass the method
 * and headers, and write the answer's status, headers and body; plus one delivery end to end.
 * The pipeline's own rules (signature, payload, routing, dedupe, handler outcomes, budget) are
 * tested once, where they live: packages/core/test/running/receiver.test.ts.
 */
export function adapterConformance(name: string, adapter: AdapterUnderTest): void {
  describe(`${name} adapter`, () => {
    const s = server(adapter.start);
    const deliver = (event: object | string, secret: string = current!) => {
      const body = typeof event === 'string' ? event : JSON.stringify(event);
      const { headers } = signedBody(body, { secret });
      return send(s.url, { headers, body });
    };

    it('delivers end to end: the handler runs once and the answer is 200 with a JSON body', async () => {
      const event = createEvent('payment.success');
      const res = await deliver(event);
      expect([res.status, JSON.parse(res.text)]).toEqual([200, { outcome: 'processed' }]);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(runsOf(s.logFile, event.reference)).toMatchObject([{ event: 'payment.success', attempt: 1, secretIndex: 0 }]);
    });

    describe('configured for ePay (signatureHeader: X-Epay-Signature)', () => {
      const epay = server((logFile) => adapter.start(logFile, 'X-Epay-Signature'));

      it('processes a delivery signed in X-Epay-Signature with customer.email null, once; a copy is a duplicate', async () => {
        // As the ePay SDKs model a customer with no email (go-sdk client_test.go TestVerifyReturnsTheReceipt: "email":null).
        const event = { ...createEvent('payment.success'), customer: { name: 'Abebe Bikila', email: null, phone: '+251911234567' } };
        const body = JSON.stringify(event);
        const { headers } = signedBody(body, { secret: current!, signatureHeader: 'X-Epay-Signature' });
        expect(Object.keys(headers)).toContain('x-epay-signature');
        const first = await send(epay.url, { headers, body });
        const copy = await send(epay.url, { headers, body });
        expect([first.status, JSON.parse(first.text), copy.status, JSON.parse(copy.text)]).toEqual([
          200,
          { outcome: 'processed' },
          200,
          { outcome: 'duplicate' },
        ]);
        expect(runsOf(epay.logFile, event.reference)).toMatchObject([{ event: 'payment.success', email: null, attempt: 1 }]);
      });

      it('refuses the interface header there, and the log names the one to set', async () => {
        const event = createEvent('payment.success');
        const res = await deliver(event);
        const again = await send(epay.url, {
          headers: signedBody(JSON.stringify(event), { secret: current! }).headers,
          body: JSON.stringify(event),
        });
        expect([res.status, again.status]).toEqual([200, 401]);
        expect(reportsOf(epay.logFile, (r) => r.status === 401).at(-1)).toMatchObject({
          outcome: 'unauthorized',
          signatureHeaderSeen: 'x-service-signature',
        });
      });
    });

    it('hands the receiver the bytes as sent: signed pretty-printed JSON runs; the same event re-serialised under that signature gets 401', async () => {
      const event = createEvent('payment.success');
      const original = JSON.stringify(event, null, 2);
      const { headers } = signedBody(original, { secret: current! });
      expect((await send(s.url, { headers, body: original })).status).toBe(200);
      const res = await send(s.url, { headers, body: JSON.stringify(JSON.parse(original)) });
      expect([res.status, JSON.parse(res.text)]).toEqual([401, { outcome: 'unauthorized' }]);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(1);
    });

    it('answers 401 to a duplicated signature header, as the framework presents it, and runs nothing', async () => {
      const event = createEvent('payment.success');
      const body = JSON.stringify(event);
      const good = sign(body, current!);
      const res = await send(s.url, { headers: { 'content-type': 'application/json', 'x-service-signature': [good, good] }, body });
      expect([res.status, JSON.parse(res.text)]).toEqual([401, { outcome: 'unauthorized' }]);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
    });

    it("answers a stranger's deeply nested body under a well-formed signature header with the bare 401, and goes on", async () => {
      // 6,000 levels overflowed the stack of the signature diagnosis (issue 30); the limit here is 4,096 bytes.
      const body = `${'['.repeat(2000)}${']'.repeat(2000)}`;
      const res = await send(s.url, {
        headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${'ab'.repeat(32)}` },
        body,
      });
      expect([res.status, res.text]).toEqual([401, '{"outcome":"unauthorized"}']);
      const event = createEvent('payment.success');
      expect((await deliver(event)).status).toBe(200);
    });

    it('answers a step that throws with a bare 500 that carries nothing internal, logs it, and goes on', async () => {
      const event = { ...createEvent('payment.success'), merchantReference: SCENARIO.crash.merchantReference };
      const res = await deliver(event);
      expect([res.status, res.text]).toEqual([500, '{"outcome":"failed"}']);
      expect(reportsOf(s.logFile, (r) => r.error === SCENARIO.crash.message)).toMatchObject([{ outcome: 'failed', status: 500 }]);
      const next = createEvent('payment.success');
      expect((await deliver(next)).status).toBe(200);
    });

    it('answers 405 with Allow: POST to GET', async () => {
      const res = await send(s.url, { method: 'GET' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
    });

    // Fastify runs no parser for an empty body; the Node bridge once took that for a body read elsewhere (500).
    it('answers a signed empty body 400 malformed, not 500', async () => {
      const res = await send(s.url, { headers: { 'content-length': '0', 'x-service-signature': sign('', current!) }, body: '' });
      expect([res.status, JSON.parse(res.text)]).toEqual([400, { outcome: 'malformed' }]);
    });

    it('answers 413 to a signed body over maxBodyBytes, and runs nothing', async () => {
      const event = createEvent('payment.success', {
        customer: { name: 'x'.repeat(SCENARIO.maxBodyBytes), email: 'a@example.com', phone: '251911234567' },
      });
      const res = await deliver(event);
      expect([res.status, JSON.parse(res.text)]).toEqual([413, { outcome: 'too-large' }]);
      expect(runsOf(s.logFile, event.reference)).toHaveLength(0);
    });

    it('takes a signed body of exactly maxBodyBytes, whole or chunked, and answers 413 to one byte more', async () => {
      for (const [bytes, status] of [
        [SCENARIO.maxBodyBytes, 200],
        [SCENARIO.maxBodyBytes + 1, 413],
      ] as const) {
        const { event, body } = sized(bytes);
        const { headers } = signedBody(body, { secret: current! });
        const raw = Buffer.from(body);
        expect(raw.byteLength).toBe(bytes);
        const whole = await send(s.url, { headers, body });
        const chunked = await send(s.url, { headers, chunks: [raw.subarray(0, 100), raw.subarray(100)] });
        expect([whole.status, chunked.status], `${bytes} bytes`).toEqual([status, status]);
        expect(runsOf(s.logFile, event.reference), `${bytes} bytes`).toHaveLength(status === 200 ? 1 : 0);
      }
    });

    it('answers 413 to a chunked body without Content-Length, counting the bytes', async () => {
      const chunks = Array.from({ length: 20 }, () => Buffer.alloc(SCENARIO.maxBodyBytes / 8, 0x20));
      const res = await send(s.url, {
        headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${'0'.repeat(64)}` },
        chunks,
      });
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

    describe('a platform: many accounts on one route, the account in the path', () => {
      const pl = server(adapter.platform);
      const post = (account: string, body: string, secret: string) =>
        send(`${pl.url}/${account}`, { headers: signedBody(body, { secret }).headers, body });

      it("runs an account's delivery as that account's, and refuses another account's secret as it refuses a stranger", async () => {
        const event = createEvent('payment.success');
        const body = JSON.stringify(event);
        const refused = [401, '{"outcome":"unauthorized"}'];
        expect([(await post('acct_B', body, 'whsec_platform_a')).status, (await post('acct_B', body, 'whsec_platform_a')).text]).toEqual(
          refused,
        );
        const unknown = await post('acct_nobody', body, 'whsec_platform_a');
        expect([unknown.status, unknown.text]).toEqual(refused);
        expect((await post('acct_A', body, 'whsec_platform_a_old')).status).toBe(200);
        expect(runsOf(pl.logFile, event.reference)).toMatchObject([{ account: 'acct_A', secretIndex: 1 }]);
        expect(reportsOf(pl.logFile, (r) => r.reference === event.reference && r.status === 200)).toMatchObject([{ account: 'acct_A' }]);
      });

      it.each([
        ['an encoded dot segment', '%2E%2E'],
        ['an encoded slash', 'acct_B%2F..%2Facct_A'],
        ['a look-alike letter', '%D0%B0cct_A'],
        ['a 2 KB name', 'a'.repeat(2048)],
      ])('%s in the path names no account: refused, nothing runs', async (_, segment) => {
        const event = createEvent('payment.success');
        const res = await post(segment, JSON.stringify(event), 'whsec_platform_a');
        // Routers that resolve `%2E%2E` (404; Next redirects, 308) or cap a parameter's length (Fastify: 100, 414)
        // answer before payhook; payhook's own answer is the bare 401.
        if (res.status === 401) expect(res.text).toBe('{"outcome":"unauthorized"}');
        else expect([308, 404, 414]).toContain(res.status);
        expect(runsOf(pl.logFile, event.reference)).toEqual([]);
      });
    });

    describe("with the framework's JSON body parser mounted first", () => {
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
          expect(runsOf(k.logFile, event.reference)).toHaveLength(1);
        });

        it('holds kept bytes to maxBodyBytes too: exactly the limit runs, one byte more is 413', async () => {
          for (const [bytes, status] of [
            [SCENARIO.maxBodyBytes, 200],
            [SCENARIO.maxBodyBytes + 1, 413],
          ] as const) {
            const { event, body } = sized(bytes);
            const { headers } = signedBody(body, { secret: current! });
            expect((await send(k.url, { headers, body })).status, `${bytes} bytes`).toBe(status);
            expect(runsOf(k.logFile, event.reference), `${bytes} bytes`).toHaveLength(status === 200 ? 1 : 0);
          }
        });
      });
    }
  });
}
