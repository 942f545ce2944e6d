import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type PaymentEvent } from '@payhook/core';
import { EVENT_NAMES, paymentEventSchema } from '@payhook/core/lifecycle';
import { toNodeListener } from '@payhook/core/node';
import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import {
  merchants,
  receiver,
  SANDBOX_KEY,
  SECRET,
  start,
  validInput,
  type Receiver,
  type Started,
} from '@payhook/test-support/apps/reference-service';

const MINUTE = 60_000;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function setup(answer?: Parameters<typeof receiver>[0], callbackUrl?: (r: Receiver) => string) {
  const r = await receiver(answer);
  cleanup.push(r.close);
  const s = await start({ allowHttpCallbacks: true, merchants: merchants(callbackUrl ? callbackUrl(r) : r.url) });
  cleanup.push(s.close);
  return { r, s };
}

async function paid(s: Started, overrides: Record<string, unknown> = {}): Promise<string> {
  const init = await s.call('POST', '/v1/transactions/initialize', { body: validInput(overrides) });
  expect(init.status).toBe(200);
  const reference = init.json.reference as string;
  expect((await s.call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
  return reference;
}

const deliveriesOf = async (s: Started, reference: string) =>
  (await s.call('GET', `/_sandbox/deliveries?reference=${reference}`)).json as {
    id: string;
    event: string;
    state: string;
    nextAttemptAt: string | null;
    duplicateOf: string | null;
    attempts: { number: number; at: string; status: number | null; durationMs: number; error: string | null }[];
  }[];

describe('webhook dispatcher on the virtual clock', () => {
  it('a receiver that fails 4 times then answers 200 gets exactly 5 attempts, 1, 2, 4 and 8 minutes apart', async () => {
    const { r, s } = await setup((n, _req, res) => {
      res.writeHead(n <= 4 ? 500 : 200).end();
    });
    const reference = await paid(s);
    await s.service.clock.advance(0);
    expect(r.requests).toHaveLength(1);
    await s.service.clock.advance(30 * MINUTE);
    expect(r.requests).toHaveLength(5);
    const [d] = await deliveriesOf(s, reference);
    expect(d!.state).toBe('delivered');
    expect(d!.attempts.map((a) => a.status)).toEqual([500, 500, 500, 500, 200]);
    expect(d!.attempts.map((a) => a.error === null)).toEqual([false, false, false, false, true]);
    const times = d!.attempts.map((a) => Date.parse(a.at));
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual([1 * MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE]);
    // Every attempt carries the same bytes and signature.
    expect(new Set(r.requests.map((q) => q.body.toString())).size).toBe(1);
    expect(new Set(r.requests.map((q) => q.headers['x-service-signature'])).size).toBe(1);
  });

  it('a receiver that always fails is marked permanently failed after the 5th attempt', async () => {
    const { r, s } = await setup((_n, _req, res) => {
      res.writeHead(503).end();
    });
    const reference = await paid(s);
    await s.service.clock.advance(14 * MINUTE);
    let [d] = await deliveriesOf(s, reference);
    expect(d!.attempts).toHaveLength(4);
    expect(d!.state).toBe('retrying');
    await s.service.clock.advance(60 * MINUTE);
    [d] = await deliveriesOf(s, reference);
    expect(d!.attempts).toHaveLength(5);
    expect(d!.state).toBe('failed');
    expect(d!.nextAttemptAt).toBeNull();
    expect(r.requests).toHaveLength(5);
  });

  it('an 11-second receiver counts as failed at 10 s of the service clock', async () => {
    const started = Date.now();
    const { r, s } = await setup((_n, _req, res) => {
      const t = setTimeout(() => res.writeHead(200).end(), 11_000);
      res.on('close', () => clearTimeout(t));
    });
    const reference = await paid(s);
    await s.service.clock.advance(9_999);
    expect((await deliveriesOf(s, reference))[0]!.attempts).toHaveLength(0);
    await s.service.clock.advance(1);
    const [d] = await deliveriesOf(s, reference);
    expect(r.requests).toHaveLength(1);
    expect(d!.attempts).toEqual([
      expect.objectContaining({ number: 1, status: null, durationMs: 10_000, error: expect.stringMatching(/timed out/) }),
    ]);
    expect(d!.state).toBe('retrying');
    expect(Date.parse(d!.nextAttemptAt!) - Date.parse(d!.attempts[0]!.at)).toBe(MINUTE);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('signs exactly the bytes it sends: openssl agrees with the header', async () => {
    const { r, s } = await setup();
    await paid(s);
    await s.service.clock.advance(0);
    const [req] = r.requests;
    const out = spawnSync('openssl', ['dgst', '-sha256', '-hmac', SECRET], { input: req!.body, encoding: 'utf8' });
    expect(out.status).toBe(0);
    const hex = /([0-9a-f]{64})\s*$/.exec(out.stdout)![1];
    expect(req!.headers['x-service-signature']).toBe(`sha256=${hex}`);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(paymentEventSchema.parse(JSON.parse(req!.body.toString()))).toMatchObject({ event: 'payment.success', status: 'completed' });
  });

  it('refuses http:// callbacks without allowHttpCallbacks, and http to non-loopback hosts even with it', async () => {
    expect(() => createReferenceService({ merchants: merchants('http://127.0.0.1:9/webhooks') })).toThrow(
      /\[@payhook\/reference\].*https.*--allow-http-callbacks/,
    );
    expect(() => createReferenceService({ allowHttpCallbacks: true, merchants: merchants('http://shop.example/webhooks') })).toThrow(
      /loopback/,
    );
    const s = await start({ allowHttpCallbacks: true });
    cleanup.push(s.close);
    const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ callbackUrl: 'http://shop.example/webhooks' }) });
    expect(res.status).toBe(400);
    expect(res.json.data.message).toMatch(/loopback/);
  });

  it('a per-transaction callbackUrl wins over the global one', async () => {
    const { r: global, s } = await setup();
    const own = await receiver();
    cleanup.push(own.close);
    await paid(s, { callbackUrl: own.url });
    await s.service.clock.advance(0);
    expect(own.requests).toHaveLength(1);
    expect(global.requests).toHaveLength(0);
  });

  it('does not follow redirects, and records connection errors', async () => {
    const target = await receiver();
    cleanup.push(target.close);
    const { s } = await setup((_n, _req, res) => {
      res.writeHead(307, { location: target.url }).end();
    });
    const reference = await paid(s);
    await s.service.clock.advance(0);
    expect(target.requests).toHaveLength(0);
    expect((await deliveriesOf(s, reference))[0]!.attempts[0]).toMatchObject({ status: 307, error: 'redirect 307 not followed' });

    const closed = await receiver();
    await closed.close();
    const other = await paid(s, { callbackUrl: closed.url });
    await s.service.clock.advance(0);
    expect((await deliveriesOf(s, other))[0]!.attempts[0]).toMatchObject({
      status: null,
      error: expect.stringMatching(/connection error/),
    });
  });

  it('sends every event of section 6 with the payload of 2.1', async () => {
    const { r, s } = await setup();
    const init = async () => (await s.call('POST', '/v1/transactions/initialize', { body: validInput() })).json.reference as string;
    const act = (ref: string, action: string) => s.call('POST', `/_sandbox/transactions/${ref}/${action}`);
    const a = await init();
    await act(a, 'pay');
    await act(a, 'refund');
    await act(a, 'complete-refund');
    await act(await init(), 'fail');
    await s.call('POST', `/v1/transactions/${await init()}/cancel`);
    const d = await init();
    await act(d, 'pay');
    await act(d, 'reverse');
    await s.service.clock.advance(0);
    const events = r.requests.map((q) => paymentEventSchema.parse(JSON.parse(q.body.toString())));
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(EVENT_NAMES));
    expect(events.map((e) => [e.event, e.status])).toEqual(
      expect.arrayContaining([
        ['payment.refunded', 'refunded'],
        ['payment.failed', 'failed'],
        ['payment.cancelled', 'cancelled'],
        ['payment.reversed', 'reversed'],
      ]),
    );
  });

  it('the webhook payload keeps currency (not currencyCode); paymentMethod is null until the payment is made', async () => {
    const { r, s } = await setup();
    const init = await s.call('POST', '/v1/transactions/initialize', {
      body: validInput({ firstName: 'Abebe', lastName: 'Bikila', email: 'a@example.test' }),
    });
    await s.call('POST', `/v1/transactions/${init.json.reference}/cancel`);
    const reference = await paid(s, { currencyCode: 'USD' });
    await s.service.clock.advance(0);
    const [cancelled, success] = r.requests.map((q) => JSON.parse(q.body.toString()));
    expect(cancelled).toMatchObject({
      event: 'payment.cancelled',
      currency: 'ETB',
      paymentMethod: null,
      customer: { name: 'Abebe Bikila', email: 'a@example.test' },
    });
    expect(success).toMatchObject({ event: 'payment.success', reference, currency: 'USD', paymentMethod: 'telebirr' });
    for (const body of [cancelled, success]) {
      expect(body).not.toHaveProperty('currencyCode');
      expect(Object.keys(body)).toEqual([
        'event',
        'mode',
        'reference',
        'merchantReference',
        'amount',
        'serviceFee',
        'currency',
        'status',
        'paymentMethod',
        'customer',
        'paidAt',
        'createdAt',
      ]);
      expect(paymentEventSchema.safeParse(body).success).toBe(true);
    }
  });

  it('a payhook core receiver accepts the deliveries, and runs a duplicated one once', async () => {
    const handled: PaymentEvent[] = [];
    const core = createReceiver({ secret: SECRET, logger: { warn() {}, error() {} } }).on('payment.success', (event) => {
      handled.push(event);
    });
    const server = createServer(toNodeListener(core));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const s = await start({ allowHttpCallbacks: true, merchants: merchants(url) });
    cleanup.push(s.close);
    expect((await s.call('POST', '/_sandbox/faults', { body: { type: 'duplicate', times: 1 } })).status).toBe(201);
    const reference = await paid(s);
    await s.service.clock.advance(0);
    const ds = await deliveriesOf(s, reference);
    expect(ds).toHaveLength(2);
    expect(ds.map((x) => [x.state, x.attempts[0]!.status])).toEqual([
      ['delivered', 200],
      ['delivered', 200],
    ]);
    expect(ds[1]!.duplicateOf).toBe(ds[0]!.id);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({ reference, event: 'payment.success', mode: 'sandbox' });
  });
});

describe('sandbox faults', () => {
  it('drop: the delivery is recorded as dropped and never sent', async () => {
    const { r, s } = await setup();
    await s.call('POST', '/_sandbox/faults', { body: { type: 'drop', event: 'payment.success' } });
    const reference = await paid(s);
    await s.service.clock.advance(30 * MINUTE);
    expect(r.requests).toHaveLength(0);
    expect((await deliveriesOf(s, reference))[0]!.state).toBe('dropped');
    // The rule was used up: the next delivery goes through.
    await paid(s);
    await s.service.clock.advance(0);
    expect(r.requests).toHaveLength(1);
  });

  it('delay: the first attempt waits the given time on the service clock', async () => {
    const { r, s } = await setup();
    await s.call('POST', '/_sandbox/faults', { body: { type: 'delay', ms: 5_000 } });
    await paid(s);
    await s.service.clock.advance(4_999);
    expect(r.requests).toHaveLength(0);
    await s.service.clock.advance(1);
    expect(r.requests).toHaveLength(1);
  });

  it('reorder: held deliveries are sent newest first', async () => {
    const { r, s } = await setup();
    await s.call('POST', '/_sandbox/faults', { body: { type: 'reorder', count: 2 } });
    const reference = await paid(s);
    await s.service.clock.advance(0);
    expect(r.requests).toHaveLength(0);
    expect((await deliveriesOf(s, reference))[0]!.state).toBe('held');
    await s.call('POST', `/_sandbox/transactions/${reference}/refund`);
    await s.service.clock.advance(0);
    expect(r.requests.map((q) => JSON.parse(q.body.toString()).event)).toEqual(['payment.refunding', 'payment.success']);
  });

  it('fail: the next attempts fail without being sent, then the retry gets through', async () => {
    const { r, s } = await setup();
    await s.call('POST', '/_sandbox/faults', { body: { type: 'fail', count: 2 } });
    const reference = await paid(s);
    await s.service.clock.advance(3 * MINUTE);
    expect(r.requests).toHaveLength(1);
    const [d] = await deliveriesOf(s, reference);
    expect(d!.attempts.map((a) => a.status)).toEqual([null, null, 200]);
    expect(d!.state).toBe('delivered');
  });

  it('validates the fault body and lists, then clears, the rules', async () => {
    const { s } = await setup();
    const bad = await s.call('POST', '/_sandbox/faults', { body: { type: 'explode' } });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ status: 'error', data: { message: 'type must be one of: duplicate, drop, delay, reorder, fail' } });
    await s.call('POST', '/_sandbox/faults', { body: { type: 'drop', count: 3, reference: 'ref_x' } });
    expect((await s.call('GET', '/_sandbox/faults')).json).toEqual([
      expect.objectContaining({ type: 'drop', remaining: 3, reference: 'ref_x' }),
    ]);
    expect((await s.call('DELETE', '/_sandbox/faults')).json).toEqual({ cleared: true });
    expect((await s.call('GET', '/_sandbox/faults', { key: SANDBOX_KEY })).json).toEqual([]);
  });
});
