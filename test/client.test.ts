import { createClient, type Client } from '@payhook/client';
import { API_MESSAGES, MAX_LIST_RANGE_MS, PAGE_SIZE, type InitializeInput } from '@payhook/core/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_KEY, REVOKED_KEY, SANDBOX_KEY, start, validInput, type Started } from '@payhook/test-support/apps/reference-service';
import { rejection } from '@payhook/test-support/rejection';

const DAY = 24 * 60 * 60 * 1000;
/** The client offline (scripted fetch, failing network, the limiter) is in packages/client/test/client-offline.test.ts. */
/** The suite's valid input; the bad cases override fields with values the types would refuse. */
const input = (overrides: Record<string, unknown> = {}) => validInput(overrides) as InitializeInput;

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
    expect(record).toMatchObject({
      reference: created.reference,
      status: 'pending',
      customer: { phone: '251912345678' },
      merchantReference: 'c-1',
    });
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

  it('cancels only from pending or processing (204, no body), and shows it on the timeline', async () => {
    const { reference } = await client.transactions.initialize(input());
    expect(await client.transactions.cancel(reference)).toBeUndefined();
    expect(await client.transactions.retrieve(reference)).toMatchObject({ status: 'cancelled', mode: 'sandbox' });
    expect((await rejection(client.transactions.cancel(reference))).status).toBe(400);
    const timeline = await client.transactions.timeline(reference);
    expect(timeline.reference).toBe(reference);
    expect(timeline.events.map((e) => [e.eventType, e.errorCode])).toEqual([
      ['session_created', null],
      ['payment_cancelled', null],
    ]);
  });

  it('lists the payment providers, and all of them with whether they are enabled', async () => {
    const items = await client.providers.list();
    expect(items.map((p) => p.providerCode)).toContain('cbe_birr');
    const all = await client.providers.getAll();
    expect(all.every((p) => typeof p.isEnabled === 'boolean')).toBe(true);
    expect((await client.providers.listEnabled()).map((p) => p.providerCode).sort()).toEqual(
      all
        .filter((p) => p.isEnabled)
        .map((p) => p.providerCode)
        .sort(),
    );
    const readOnly = createClient({ apiKey: READ_ONLY_KEY, baseUrl: ref.url });
    const denied = await rejection(readOnly.providers.getAll());
    expect(denied.status).toBe(403);
    expect(denied.serviceMessage).toMatch(/get_platform_payment_provider/);
  });

  it('throws 404, 401 and 403 as PaymentServiceError with the request', async () => {
    expect(await rejection(client.transactions.retrieve('ref_missing'))).toMatchObject({
      status: 404,
      request: { method: 'GET', sent: true },
    });
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
    for (let i = 0; i < PAGE_SIZE + 1; i++) await client.transactions.initialize(input());
    const page = await client.transactions.list();
    expect(page.data).toHaveLength(PAGE_SIZE);
    expect(page).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const cursor = page.nextCursor!;
    const tampered = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'BB' : 'AA');
    const bad = await rejection(client.transactions.list({ cursor: tampered }));
    expect(bad).toMatchObject({ status: 400, serviceMessage: API_MESSAGES.cursor, request: { sent: true } });
    await ref.service.clock.advance(16 * 60 * 1000);
    const expired = await rejection(client.transactions.list({ cursor }));
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
      for await (const record of c.transactions.listAll({ from: new Date(begin), to })) seen.push(record.reference);
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
      for (let i = 0; i < 100; i++) await c.transactions.list();
      const raw = await own.call('GET', '/v1/transactions');
      expect(raw.status).toBe(429);
      const retryAfter = Number(raw.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      const page = await c.transactions.list();
      expect(page).toEqual({ data: [], nextCursor: null, hasMore: false });
      expect(waits).toEqual([retryAfter * 1000]);
    } finally {
      await own.close();
    }
  });
});
