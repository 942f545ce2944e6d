import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, createRateLimiter, MAX_EMPTY_PAGES, windows } from '@payhook/client';
import { MAX_LIST_RANGE_MS } from '@payhook/core/api';
import { describe, expect, it } from 'vitest';
import { rejection } from '@payhook/test-support/rejection';

const SANDBOX_KEY = 'sk_test_offline_key_0001';
const DAY = 24 * 60 * 60 * 1000;

/** A client whose fetch answers from `answers`, in order, and records the URLs and bodies it was given. */
function scripted(answers: (() => Response)[], apiKey = SANDBOX_KEY) {
  const urls: URL[] = [];
  const bodies: unknown[] = [];
  const client = createClient({
    apiKey,
    baseUrl: 'http://service.invalid',
    maxRetries: 0,
    sleep: async () => {},
    fetch: async (input, init) => {
      urls.push(new URL(String(input)));
      bodies.push(init?.body === undefined ? undefined : JSON.parse(String(init.body)));
      const next = answers.shift();
      if (!next) throw new Error('the test scripted no more answers');
      return next();
    },
  });
  return { client, urls, bodies };
}

const record = (reference: string, extra: Record<string, unknown> = {}) => ({
  reference,
  status: 'completed',
  amount: '10.00',
  currencyCode: 'ETB',
  createdAt: '2026-08-13T11:30:00.000Z',
  ...extra,
});
const page = (refs: string[], nextCursor: string | null, hasMore: boolean) => () =>
  Response.json({ data: refs.map((r) => record(r)), nextCursor, hasMore });

describe('the client on scripted answers', () => {
  it('stops listAll when nextCursor is null even if hasMore says true, and keeps the filters on every page', async () => {
    const { client, urls } = scripted([page(['A'], 'c1', true), page(['B'], null, true)]);
    const seen: string[] = [];
    for await (const t of client.transactions.listAll({ currency: 'USD' })) seen.push(t.reference);
    expect(seen).toEqual(['A', 'B']);
    expect(urls.map((u) => [u.searchParams.get('cursor'), u.searchParams.get('currency')])).toEqual([
      [null, 'USD'],
      ['c1', 'USD'],
    ]);
  });

  it('ends a walk whose service repeats a cursor, or keeps sending empty pages with hasMore, with a clear error', async () => {
    const looping = scripted([page(['A'], 'same', true), page([], 'same', true)]);
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const t of looping.client.transactions.listAll()) seen.push(t.reference);
      })(),
    );
    expect(seen).toEqual(['A']);
    expect(error.message).toMatch(
      /^\[@payhook\/client\] GET \/v1\/transactions failed with 200: stopped walking the list: it gave the cursor same a second time/,
    );
    expect(looping.urls).toHaveLength(2);

    const empty = scripted(Array.from({ length: MAX_EMPTY_PAGES + 3 }, (_, i) => page([], `e${i}`, true)));
    expect(
      (
        await rejection(
          (async () => {
            for await (const _ of empty.client.transactions.listAll()) void _;
          })(),
        )
      ).serviceMessage,
    ).toMatch(new RegExp(`${MAX_EMPTY_PAGES} empty pages in a row`));
    expect(empty.urls).toHaveLength(MAX_EMPTY_PAGES);
  });

  it('follows an empty page that says hasMore, with a fresh cursor, to the records after it', async () => {
    const { client } = scripted([page([], 'c1', true), page(['B'], null, false)]);
    const seen: string[] = [];
    for await (const t of client.transactions.listAll()) seen.push(t.reference);
    expect(seen).toEqual(['B']);
  });

  it('takes cancel as done on any 2xx, with or without a body', async () => {
    const { client, urls } = scripted([
      () => new Response(null, { status: 204 }),
      () => new Response('', { status: 200 }),
      () => Response.json(record('R'), { status: 202 }),
    ]);
    for (let i = 0; i < 3; i++) await expect(client.transactions.cancel('R')).resolves.toBeUndefined();
    expect(urls.map((u) => u.pathname)).toEqual(Array(3).fill('/v1/transactions/R/cancel'));
  });

  it("gives every record a mode: the record's own, else the key's", async () => {
    const live = scripted(
      [() => Response.json(record('L')), () => Response.json(record('S', { mode: 'sandbox' }))],
      'sk_live_offline_0001',
    );
    expect((await live.client.transactions.retrieve('L')).mode).toBe('live');
    expect((await live.client.transactions.retrieve('S')).mode).toBe('sandbox');
  });

  it('sends the initialize fields the SDKs send, and says what to do with an answer that is not JSON', async () => {
    const { client, bodies } = scripted([
      () => Response.json({ reference: 'R', checkoutUrl: 'https://pay.example/R' }),
      () => new Response('<html>proxy error</html>', { status: 200 }),
    ]);
    const extra = { email: 'abebe@example.com', firstName: 'Abebe', lastName: 'Bikila', returnUrl: 'https://shop.example/done' };
    const input = { amount: '10.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'o-1', ...extra } as const;
    expect(await client.transactions.initialize(input)).toEqual({ reference: 'R', checkoutUrl: 'https://pay.example/R' });
    expect(bodies[0]).toMatchObject({ ...extra, customerPhone: '251911234567' });
    const error = await rejection(client.transactions.verify('R'));
    expect(error.serviceMessage).toMatch(/^the answer is not JSON, .*check that baseUrl is the payment service's origin/);
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
          : Response.json({ reference: 'r', events: [] });
      },
    });
    expect(await c.transactions.timeline('r')).toEqual({ reference: 'r', events: [] });
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
    expect(() => createClient({ apiKey: 'pk_123', baseUrl: 'http://x' })).toThrow(
      /^\[@payhook\/client\] apiKey must be a secret key starting sk_test_/,
    );
    expect(() => createClient({ apiKey: SANDBOX_KEY, baseUrl: 'api.example.com' })).toThrow(/baseUrl must be an absolute URL/);
  });
});

describe('the shared rate limiter', () => {
  it('keeps background work to its share while the app still gets through', async () => {
    let now = 0;
    const limiter = createRateLimiter({
      limit: 10,
      windowMs: 1_000,
      backgroundShare: 0.5,
      now: () => now,
      sleep: async (ms) => void (now += ms),
    });
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
