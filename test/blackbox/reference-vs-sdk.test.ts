import { createReferenceService, type ReferenceService } from '@payhook/reference';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * Black box: the reference service, over real HTTP, against the shapes the official ePay SDKs
 * read. Every expected shape below is written by hand from the SDKs (go-sdk types.go field lists
 * and JSON tags, the fixtures of go-sdk client_test.go and php-sdk tests/ClientTest.php), not
 * imported from payhook's schemas, so a drift between the two shows here.
 */

/** A field as a Go SDK struct decodes it: `string` (non-pointer), `string?` (*string: string or null), `boolean`. */
type Field = 'string' | 'string?' | 'boolean' | { [name: string]: Field };

/** Every field of `spec` is present with its type (Go ignores unknown fields, so extras are fine). */
function expectShape(value: unknown, spec: Record<string, Field>, where = 'body'): void {
  expect(value, where).toBeTypeOf('object');
  expect(value, where).not.toBeNull();
  const object = value as Record<string, unknown>;
  for (const [name, field] of Object.entries(spec)) {
    const at = `${where}.${name}`;
    expect(Object.hasOwn(object, name), `${at} is missing`).toBe(true);
    const v = object[name];
    if (field === 'string') expect(typeof v, at).toBe('string');
    else if (field === 'string?') expect(v === null || typeof v === 'string', `${at} is a string or null`).toBe(true);
    else if (field === 'boolean') expect(typeof v, at).toBe('boolean');
    else expectShape(v, field, at);
  }
}

// go-sdk types.go `InitializedPayment`.
const INITIALIZED_PAYMENT = { reference: 'string', checkoutUrl: 'string', status: 'string', expiresAt: 'string' } as const;
// go-sdk types.go `Customer`: every field *string.
const CUSTOMER = { name: 'string?', email: 'string?', phone: 'string?' } as const;
// go-sdk types.go `VerifiedPayment` (paidAt is a plain string: a verified payment was paid).
const VERIFIED_PAYMENT = {
  reference: 'string',
  merchantReference: 'string?',
  status: 'string',
  amount: 'string',
  serviceFee: 'string?',
  currencyCode: 'string?',
  paymentMethod: 'string?',
  customer: CUSTOMER,
  paidAt: 'string',
  createdAt: 'string',
} as const;
// go-sdk types.go `Transaction` (retrieve and list).
const TRANSACTION = {
  reference: 'string',
  merchantReference: 'string?',
  status: 'string',
  amount: 'string',
  currencyCode: 'string',
  paidAt: 'string?',
  createdAt: 'string',
} as const;
// go-sdk types.go `TimelineEvent`.
const TIMELINE_EVENT = { eventType: 'string', occurredAt: 'string', errorCode: 'string?', errorMessage: 'string?' } as const;
// go-sdk types.go `ProviderItem` and `Provider`.
const PROVIDER_ITEM = { providerCode: 'string', providerName: 'string?', flowCode: 'string' } as const;
const PROVIDER = { ...PROVIDER_ITEM, providerCategory: 'string?', isEnabled: 'boolean' } as const;

// go-sdk types.go `AllStatuses`.
const STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled', 'reversed', 'refunding', 'refunded'];
// go-sdk types.go `InitializedPayment.Reference`: "formatted P{8-hex}{yyyymmdd}"; fixture PAB12CD3420260813 (client_test.go sessionJSON).
const REFERENCE = /^P[0-9A-F]{8}\d{8}$/;
// ISO 8601 with milliseconds, as every timestamp of the fixtures ("2026-08-13T12:30:00.000Z").
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// go-sdk transactions.go `PageSize`.
const PAGE_SIZE = 10;

const KEY = 'sk_test_blackbox_sdk_0001';
const NO_PROVIDER_KEY = 'sk_test_blackbox_sdk_0002';

let service: ReferenceService;
let base: string;
let close: () => Promise<void>;

interface Answer {
  status: number;
  text: string;
  json: any;
}

async function call(method: string, path: string, body?: unknown, key = KEY): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
}

// The body both SDKs send: amount with two decimals, upper-case currency, +251 phone (go-sdk client_test.go TestInitializeSendsTheDocumentedRequest).
const initialize = (fields: Record<string, unknown> = {}) =>
  call('POST', '/v1/transactions/initialize', {
    amount: '250.00',
    currencyCode: 'ETB',
    customerPhone: '+251911234567',
    merchantReference: 'order_123',
    ...fields,
  });

beforeAll(async () => {
  service = createReferenceService({
    clock: 'manual',
    rateLimit: { limit: 10_000 },
    merchants: [
      {
        id: 'sdk',
        apiKeys: [
          { key: KEY },
          { key: NO_PROVIDER_KEY, permissions: ['transactions:initialize', 'transactions:read', 'list_platform_payment_provider'] },
        ],
        webhookSecret: 'whsec_blackbox',
        providers: ['telebirr', 'cbe_birr'],
      },
    ],
  });
  const running = await service.listen({ port: 0, host: '127.0.0.1' });
  base = running.url;
  close = running.close;
});
afterAll(async () => {
  await close();
  service.close();
});

describe('the reference service answers what the official SDKs read', () => {
  it('initialize: 200 with a bare InitializedPayment (go-sdk types.go InitializedPayment, client_test.go sessionJSON, php ClientTest SESSION)', async () => {
    const res = await initialize({ email: 'abebe@example.com', firstName: 'Abebe', lastName: 'Bikila' });
    // Both SDKs' recorded initialize responses are 200.
    expect(res.status).toBe(200);
    expectShape(res.json, INITIALIZED_PAYMENT);
    expect(res.json.reference).toMatch(REFERENCE);
    expect(res.json.status).toBe('success');
    expect(res.json.expiresAt).toMatch(ISO);
    expect(res.json.checkoutUrl).toContain(res.json.reference);
  });

  it('verify: the receipt with serviceFee, customer and currencyCode (go-sdk types.go VerifiedPayment, client_test.go TestVerifyReturnsTheReceipt)', async () => {
    const { reference } = (await initialize({ firstName: 'Abebe', lastName: 'Bikila' })).json;
    expect((await call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
    const res = await call('GET', `/v1/transactions/${reference}/verify`);
    expect(res.status).toBe(200);
    expectShape(res.json, VERIFIED_PAYMENT);
    expect(res.json).toMatchObject({
      reference,
      status: 'completed',
      amount: '250.00',
      serviceFee: expect.stringMatching(/^\d+\.\d{2}$/),
      currencyCode: 'ETB',
    });
    expect(res.json.customer).toEqual({
      name: 'Abebe Bikila',
      email: expect.any(String),
      phone: expect.stringMatching(/^\+?251911234567$/),
    });
    expect(res.json.paidAt).toMatch(ISO);
    // Transaction endpoints say currencyCode; only the webhook says currency (go-sdk types.go WebhookEvent comment).
    expect(res.json).not.toHaveProperty('currency');
  });

  it('verify before completion: 400 in the {status:"error",data:{message}} envelope naming the status (go-sdk client_test.go TestVerifyReportsAnIncompleteTransaction)', async () => {
    const { reference } = (await initialize()).json;
    const res = await call('GET', `/v1/transactions/${reference}/verify`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ status: 'error', data: { message: expect.stringContaining('pending') } });
  });

  it('retrieve: a Transaction (go-sdk types.go Transaction, transactions.go Retrieve)', async () => {
    const { reference } = (await initialize()).json;
    const res = await call('GET', `/v1/transactions/${reference}`);
    expect(res.status).toBe(200);
    expectShape(res.json, TRANSACTION);
    expect(res.json).toMatchObject({
      reference,
      merchantReference: 'order_123',
      status: 'pending',
      amount: '250.00',
      currencyCode: 'ETB',
      paidAt: null,
    });
    expect(STATUSES).toContain(res.json.status);
    expect(res.json.createdAt).toMatch(ISO);
  });

  it('list: {data, nextCursor, hasMore}, 10 a page, walked to the end with the filters kept (go-sdk types.go transactionListResponse, client_test.go TestIterateWalksEveryPageAndKeepsFilters, php ClientTest testIteratingAPageWalksEveryFollowingPage)', async () => {
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await initialize({ currencyCode: 'USD', merchantReference: `walk_${i}` })).json.reference);
    await initialize({ currencyCode: 'USD', customerPhone: '+251900000010' }); // completed at once: filtered out by status
    const filters = 'currency=USD&status=pending';
    const pages: { size: number; hasMore: boolean; nextCursor: string | null }[] = [];
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Answer = await call('GET', `/v1/transactions?${filters}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expectShape(res.json, { hasMore: 'boolean', nextCursor: 'string?' });
      expect(Array.isArray(res.json.data)).toBe(true);
      res.json.data.forEach((row: unknown, i: number) => {
        expectShape(row, TRANSACTION, `data[${i}]`);
      });
      seen.push(...res.json.data.map((row: { reference: string }) => row.reference));
      pages.push({ size: res.json.data.length, hasMore: res.json.hasMore, nextCursor: res.json.nextCursor });
      cursor = res.json.nextCursor;
    } while (cursor !== null && pages.length < 5);
    expect(pages.map((p) => [p.size, p.hasMore])).toEqual([
      [PAGE_SIZE, true],
      [PAGE_SIZE, true],
      [3, false],
    ]);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    // Newest first (go-sdk transactions.go TransactionPage).
    expect(seen).toEqual([...made].reverse());
  });

  it('list: date-only from and to, as the SDKs send them (go-sdk client_test.go TestListBuildsTheDocumentedQuery)', async () => {
    const today = new Date(service.clock.now()).toISOString().slice(0, 10);
    const res = await call('GET', `/v1/transactions?from=${today}&to=${today}&currency=ETB`);
    expect(res.status).toBe(200);
    // Everything made today is inside a date-only to of today.
    expect(res.json.data.length).toBeGreaterThan(0);
  });

  it('timeline: {reference, events} oldest first, errorCode and errorMessage set on failures only (go-sdk types.go TimelineEvent, client_test.go TestTimelineDecodesErrorDetails)', async () => {
    const { reference } = (await initialize()).json;
    await call('POST', `/_sandbox/transactions/${reference}/fail`, { errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'no balance' });
    const res = await call('GET', `/v1/transactions/${reference}/timeline`);
    expect(res.status).toBe(200);
    expectShape(res.json, { reference: 'string' });
    expect(res.json.reference).toBe(reference);
    res.json.events.forEach((event: unknown, i: number) => {
      expectShape(event, TIMELINE_EVENT, `events[${i}]`);
    });
    expect(
      res.json.events.map((e: { eventType: string; errorCode: string | null; errorMessage: string | null }) => [
        e.eventType,
        e.errorCode,
        e.errorMessage,
      ]),
    ).toEqual([
      ['session_created', null, null],
      ['payment_failed', 'INSUFFICIENT_FUNDS', 'no balance'],
    ]);
    expect(res.json.events[0].occurredAt).toMatch(ISO);
  });

  it('cancel: 204 with an empty body (go-sdk client_test.go TestCancelSucceedsOn204AndIsNeverRetried, php ClientTest testCancelResolvesOn204)', async () => {
    const { reference } = (await initialize()).json;
    const res = await call('POST', `/v1/transactions/${reference}/cancel`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await call('GET', `/v1/transactions/${reference}`)).json.status).toBe('cancelled');
  });

  it('GET /v1/payment-providers/list: {data: ProviderItem[]} (go-sdk types.go ProviderItem, client_test.go TestProvidersAreUnwrappedFromTheEnvelope)', async () => {
    const res = await call('GET', '/v1/payment-providers/list');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['data']);
    res.json.data.forEach((p: unknown, i: number) => {
      expectShape(p, PROVIDER_ITEM, `data[${i}]`);
    });
    // Codes as the SDKs spell them (go-sdk types.go ProviderItem: "cbe_birr", "telebirr").
    expect(res.json.data.map((p: { providerCode: string }) => p.providerCode)).toEqual(['telebirr', 'cbe_birr']);
    expect(res.json.data[0]).toMatchObject({ providerCode: 'telebirr', providerName: 'Telebirr', flowCode: 'ussd' });
  });

  it('GET /v1/payment-providers: {data: Provider[]}, disabled ones too (go-sdk types.go Provider, client_test.go TestListEnabledFiltersDisabledProviders)', async () => {
    const res = await call('GET', '/v1/payment-providers');
    expect(res.status).toBe(200);
    res.json.data.forEach((p: unknown, i: number) => {
      expectShape(p, PROVIDER, `data[${i}]`);
    });
    const enabled = res.json.data.filter((p: { isEnabled: boolean }) => p.isEnabled).map((p: { providerCode: string }) => p.providerCode);
    expect(enabled).toEqual(['telebirr', 'cbe_birr']);
    expect(res.json.data.find((p: { providerCode: string }) => p.providerCode === 'awash_bank')).toMatchObject({
      isEnabled: false,
      providerCategory: 'bank',
    });
  });

  it('a key without the provider permission: 403 naming it (go-sdk client_test.go TestAMissingPermissionIsPermissionDenied, php ClientTest testAMissingPermissionSurfacesAsPermissionDenied)', async () => {
    const res = await call('GET', '/v1/payment-providers', undefined, NO_PROVIDER_KEY);
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      status: 'error',
      data: { message: expect.stringContaining('Missing get_platform_payment_provider permission') },
    });
    expect((await call('GET', '/v1/payment-providers/list', undefined, NO_PROVIDER_KEY)).status).toBe(200);
  });
});
