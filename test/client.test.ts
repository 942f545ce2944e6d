import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, createRateLimiter, PaymentServiceError, windows, type Client } from '@payhook/client';
import { API_MESSAGES, MAX_LIST_RANGE_MS, type InitializeInput } from '@payhook/core/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_KEY, REVOKED_KEY, SANDBOX_KEY, start, validInput, type Started } from './reference/helpers.js';

const DAY = 24 * 60 * 60 * 1000;
/** The suite's valid input; the bad cases override fields with values the types would refuse. */
const input = (overrides: Record<string, unknown> = {}) => validInput(overrides) as InitializeInput;

async function rejection(promise: Promise<unknown>): Promise<PaymentServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PaymentServiceError);
  return error as PaymentServiceError;
}

describe('the client against the reference service over HTTP', () => {
  let ref: Started;
  let client: Client;
  const pay = (reference: string, action = 'pay') => ref.call('POST', `/_sandbox/transactions/${reference}/${action}`);

  beforeAll(async () => {
    ref = await start();
    client = createClient({ apiKey: SANDBOX_KEY, baseUrl: ref.url, sleep: (ms) => ref.service.clock.advance(ms) });
  });
  afterAll(() => ref.close());

  it('initializes, normalising the phone, and reads the record back', async () => {
    const created = await client.transactions.initialize(input({ customerPhone: '+251912345678', merchantReference: 'c-1' }));
    expect(created.checkoutUrl).toContain(created.reference);
    const record = await client.transactions.retrieve(created.reference);
    expect(record).toMatchObject({ reference: created.reference, status: 'pending', customer: { phone: '251912345678' }, merchantReference: 'c-1' });
  });

  it('reuses its idempotency key on its own retry: one transaction after a lost answer', async () => {
    let calls = 0;
    const flaky = createClient({
      apiKey: SANDBOX_KEY,
      baseUrl: ref.url,
      sleep: async () => {},
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        // The service created the transaction, then the answer was lost on the way back.
        if (++calls === 1) throw new TypeError('fetch failed: socket hang up');
        return res;
      },
    });
    const before = ref.service.transactions().length;
    const created = await flaky.transactions.initialize(input({ merchantReference: 'c-retry' }));
    expect(calls).toBe(2);
    expect(ref.service.transactions().length).toBe(before + 1);
    expect(ref.service.transactions()[0]!.reference).toBe(created.reference);
  });

  it('gives the same reference for the same idempotency key given twice', async () => {
    const a = await client.transactions.initialize(input({ merchantReference: 'c-key' }), { idempotencyKey: 'order-c-key' });
    const b = await client.transactions.initialize(input({ merchantReference: 'c-key' }), { idempotencyKey: 'order-c-key' });
    expect(b.reference).toBe(a.reference);
    const clash = await rejection(client.transactions.initialize(input({ merchantReference: 'other' }), { idempotencyKey: 'order-c-key' }));
    expect(clash.status).toBe(409);
  });

  it.each([
    ['amount', { amount: '100' }, API_MESSAGES.amount],
    ['zero amount', { amount: '0.00' }, API_MESSAGES.amountZero],
    ['amount over the maximum', { amount: '1000000000.00' }, API_MESSAGES.amountMax],
    ['currency', { currencyCode: 'XYZ' }, API_MESSAGES.currencyCode],
    ['phone', { customerPhone: '0811111111' }, API_MESSAGES.customerPhone],
  ])('refuses a bad %s before sending, with the message the service gives', async (_, bad, message) => {
    const local = await rejection(client.transactions.initialize(input(bad)));
    expect(local).toMatchObject({ status: 400, serviceMessage: message, request: { sent: false } });
    const served = await ref.call('POST', '/v1/transactions/initialize', { body: input(bad) });
    expect(served.status).toBe(400);
    expect(served.json.data.message).toBe(message);
  });

  it('verifies: 400 naming the status until paid, then the completed record', async () => {
    const { reference } = await client.transactions.initialize(input());
    const early = await rejection(client.transactions.verify(reference));
    expect(early.status).toBe(400);
    expect(early.serviceMessage).toMatch(/pending/);
    expect(early.message).toMatch(/^\[@payhook\/client\] GET \/v1\/transactions\/.+\/verify failed with 400: /);
    await pay(reference);
    expect(await client.transactions.verify(reference)).toMatchObject({ reference, status: 'completed' });
  });

  it('cancels only from pending or processing, and shows it on the timeline', async () => {
    const { reference } = await client.transactions.initialize(input());
    expect(await client.transactions.cancel(reference)).toMatchObject({ status: 'cancelled' });
    expect((await rejection(client.transactions.cancel(reference))).status).toBe(400);
    const timeline = await client.transactions.timeline(reference);
    expect(timeline.entries.map((e) => [e.status, e.event])).toEqual([
      ['pending', null],
      ['cancelled', 'payment.cancelled'],
    ]);
  });

  it('throws 404, 401 and 403 as PaymentServiceError with the request', async () => {
    expect(await rejection(client.transactions.retrieve('ref_missing'))).toMatchObject({ status: 404, request: { method: 'GET', sent: true } });
    const revoked = createClient({ apiKey: REVOKED_KEY, baseUrl: ref.url });
    expect((await rejection(revoked.transactions.list())).status).toBe(401);
    const readOnly = createClient({ apiKey: READ_ONLY_KEY, baseUrl: ref.url });
    const forbidden = await rejection(readOnly.transactions.initialize(input()));
    expect(forbidden.status).toBe(403);
    expect(forbidden.request.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(forbidden)).not.toContain(READ_ONLY_KEY);
  });

  it('checks list filters before sending', async () => {
    const from = new Date('2026-01-10T00:00:00.000Z');
    const err = await rejection(client.transactions.list({ from, to: new Date(from.getTime() - 1) }));
    expect(err).toMatchObject({ status: 400, serviceMessage: API_MESSAGES.fromAfterTo, request: { sent: false } });
    const long = await rejection(client.transactions.list({ from, to: new Date(from.getTime() + MAX_LIST_RANGE_MS + 1) }));
    expect(long.serviceMessage).toBe(API_MESSAGES.rangeTooLong);
    expect((await rejection(client.transactions.list({ currency: 'etb' }))).serviceMessage).toBe(API_MESSAGES.currency);
    expect((await rejection(client.transactions.list({ status: 'paid' as never }))).serviceMessage).toBe(API_MESSAGES.status);
  });

  it('gets 400 from the service for a tampered cursor and for an expired one', async () => {
    for (let i = 0; i < 3; i++) await client.transactions.initialize(input());
    const page = await client.transactions.list({ limit: 1 });
    expect(page.nextCursor).toEqual(expect.any(String));
    const cursor = page.nextCursor!;
    const tampered = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'BB' : 'AA');
    const bad = await rejection(client.transactions.list({ limit: 1, cursor: tampered }));
    expect(bad).toMatchObject({ status: 400, serviceMessage: API_MESSAGES.cursor, request: { sent: true } });
    await ref.service.clock.advance(16 * 60 * 1000);
    const expired = await rejection(client.transactions.list({ limit: 1, cursor }));
    expect(expired).toMatchObject({ status: 400, serviceMessage: API_MESSAGES.cursorExpired });
  });

  it('walks every page across more than 90 days with listAll', async () => {
    const own = await start();
    try {
      const c = createClient({ apiKey: SANDBOX_KEY, baseUrl: own.url });
      const begin = own.service.clock.now();
      const made: string[] = [];
      for (let day = 0; day <= 200; day += 10) {
        for (let i = 0; i < 2; i++) made.push((await c.transactions.initialize(input())).reference);
        await own.service.clock.advance(10 * DAY);
      }
      const to = new Date(own.service.clock.now());
      const seen: string[] = [];
      for await (const record of c.transactions.listAll({ from: new Date(begin), to, limit: 3 })) seen.push(record.reference);
      expect(seen).toHaveLength(made.length);
      expect(new Set(seen).size).toBe(made.length);
      // Newest first, across windows and pages.
      expect(seen).toEqual([...made].reverse());
    } finally {
      await own.close();
    }
  });

  it('waits out a real 429 through Retry-After on the virtual clock', async () => {
    const own = await start();
    try {
      const waits: number[] = [];
      const c = createClient({
        apiKey: SANDBOX_KEY,
        baseUrl: own.url,
        sleep: async (ms) => {
          waits.push(ms);
          await own.service.clock.advance(ms);
        },
      });
      for (let i = 0; i < 100; i++) await c.transactions.list({ limit: 1 });
      const raw = await own.call('GET', '/v1/transactions');
      expect(raw.status).toBe(429);
      const retryAfter = Number(raw.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      const page = await c.transactions.list({ limit: 1 });
      expect(page.items).toEqual([]);
      expect(waits).toEqual([retryAfter * 1000]);
    } finally {
      await own.close();
    }
  });
});

describe('the client on a failing network', () => {
  it('retries a read after a 5xx, but never a cancel', async () => {
    let calls = 0;
    const c = createClient({
      apiKey: SANDBOX_KEY,
      baseUrl: 'http://127.0.0.1:9',
      sleep: async () => {},
      fetch: async () => {
        calls += 1;
        return calls === 1
          ? Response.json({ status: 'error', data: { message: 'overloaded' } }, { status: 503 })
          : Response.json({ status: 'success', data: { reference: 'r', entries: [] } });
      },
    });
    expect(await c.transactions.timeline('r')).toEqual({ reference: 'r', entries: [] });
    expect(calls).toBe(2);
    calls = 0;
    expect(await rejection(c.transactions.cancel('r'))).toMatchObject({ status: 503, serviceMessage: 'overloaded' });
    expect(calls).toBe(1);
  });

  it('gives up after its timeout with status 0, and after maxRetries on refused connections', async () => {
    const server = http.createServer(() => {
      // Never answers.
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const slow = createClient({ apiKey: SANDBOX_KEY, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 200, maxRetries: 0 });
      const started = performance.now();
      const err = await rejection(slow.transactions.retrieve('r'));
      expect(err).toMatchObject({ status: 0, serviceMessage: 'no answer within 200 ms' });
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
    let attempts = 0;
    const refused = createClient({
      apiKey: SANDBOX_KEY,
      baseUrl: 'http://127.0.0.1:9',
      maxRetries: 2,
      sleep: async () => void attempts++,
    });
    expect((await rejection(refused.transactions.retrieve('r'))).serviceMessage).toMatch(/could not reach the service/);
    expect(attempts).toBe(2);
  });

  it('refuses bad options with a message that says what to pass', () => {
    expect(() => createClient({ apiKey: 'pk_123', baseUrl: 'http://x' })).toThrow(/^\[@payhook\/client\] apiKey must be a secret key starting sk_test_/);
    expect(() => createClient({ apiKey: SANDBOX_KEY, baseUrl: 'api.example.com' })).toThrow(/baseUrl must be an absolute URL/);
  });
});

describe('the shared rate limiter', () => {
  it('keeps background work to its share while the app still gets through', async () => {
    let now = 0;
    const limiter = createRateLimiter({ limit: 10, windowMs: 1_000, backgroundShare: 0.5, now: () => now, sleep: async (ms) => void (now += ms) });
    for (let i = 0; i < 5; i++) await limiter.acquire('background');
    const t = now;
    await limiter.acquire('background');
    expect(now - t).toBe(1_000); // the sixth background call waited for the window
    now = t;
    const fresh = createRateLimiter({ limit: 10, windowMs: 1_000, now: () => now, sleep: async (ms) => void (now += ms) });
    for (let i = 0; i < 5; i++) await fresh.acquire('background');
    for (let i = 0; i < 5; i++) await fresh.acquire('foreground');
    expect(now).toBe(t); // foreground used the other half without waiting
    await fresh.acquire('foreground');
    expect(now).toBe(t + 1_000);
  });

  it('splits a long range into contiguous 90-day windows, newest first', () => {
    const from = new Date('2026-01-01T00:00:00.000Z');
    const to = new Date(from.getTime() + 200 * DAY);
    const w = windows({ from, to });
    expect(w).toHaveLength(3);
    expect(w[0]!.to).toBe(to.toISOString());
    expect(w.at(-1)!.from).toBe(from.toISOString());
    for (let i = 0; i < w.length; i++) {
      expect(Date.parse(w[i]!.to!) - Date.parse(w[i]!.from!)).toBeLessThanOrEqual(MAX_LIST_RANGE_MS);
      if (i > 0) expect(Date.parse(w[i - 1]!.from!) - Date.parse(w[i]!.to!)).toBe(1);
    }
  });
});
