import { createClient, type ClientOptions } from '@payhook/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as F from './sdk-fixtures.js';
import { rejection } from '@payhook/test-support/rejection';

/**
 * `@payhook/client` against the official SDKs' recorded answers (go-sdk client_test.go, php-sdk
 * tests/ClientTest.php), served over real HTTP: does it send what those tests expect the service
 * to receive, and read every answer they record? Written from the fixtures, not from our code.
 */

const KEY = 'sk_test_0123456789abcdef'; // go-sdk `testAPIKey`, php-sdk `API_KEY`
const INPUT = { amount: '10.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'order_9' } as const;

let server: F.ScriptedServer;
let waits: number[];
const client = (options: Partial<ClientOptions> = {}) =>
  createClient({ apiKey: KEY, baseUrl: server.url, maxRetries: 0, sleep: async (ms) => void waits.push(ms), ...options });

beforeAll(async () => {
  server = await F.scriptedServer();
});
afterAll(() => server.close());
beforeEach(() => {
  waits = [];
});

describe('initialize', () => {
  it('POSTs to /v1/transactions/initialize with Bearer auth and the caller key, and returns the session', async () => {
    // go-sdk TestInitializeSendsTheDocumentedRequest; php-sdk testInitializePostsToTheDocumentedPath, testInitializeSendsTheCallerIdempotencyKey
    server.script({ status: 200, body: F.SESSION });
    const session = await client().transactions.initialize({ ...INPUT, merchantReference: 'order_123' }, { idempotencyKey: 'order_123' });
    expect(session).toEqual(F.SESSION);
    expect(server.calls).toHaveLength(1);
    const [call] = server.calls;
    expect([call!.method, call!.path]).toEqual(['POST', '/v1/transactions/initialize']);
    expect(call!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(call!.headers['content-type']).toBe('application/json');
    expect(call!.headers['x-idempotency-key']).toBe('order_123');
    const body = JSON.parse(call!.body);
    expect(body).toMatchObject({ amount: '10.00', currencyCode: 'ETB', merchantReference: 'order_123' });
    expect(body).not.toHaveProperty('callbackUrl'); // unset optional fields are left out, not null
  });

  it('sends the optional email, and a generated idempotency key when none is given', async () => {
    // php-sdk testInitializeOmitsOptionalFieldsNotSet, testInitializeGeneratesAnIdempotencyKeyWhenOmitted; go-sdk TestInitializeGeneratesAnIdempotencyKeyWhenOmitted
    server.script({ status: 200, body: F.SESSION });
    await client().transactions.initialize({ ...INPUT, email: 'abebe@example.com' });
    expect(JSON.parse(server.calls[0]!.body).email).toBe('abebe@example.com');
    expect(String(server.calls[0]!.headers['x-idempotency-key']).length).toBeGreaterThanOrEqual(12);
  });

  it('refuses a bad amount before spending a request', async () => {
    // go-sdk TestInitializeValidatesBeforeSpendingARequest; php-sdk testInitializeValidatesBeforeSpendingARequest
    server.script();
    expect(await rejection(client().transactions.initialize({ ...INPUT, amount: '-1' }))).toMatchObject({
      status: 400,
      request: { sent: false },
    });
    expect(server.calls).toHaveLength(0);
  });

  it('waits out a 429 through Retry-After and resends with the same idempotency key', async () => {
    // go-sdk TestA429IsRetriedAndReusesTheIdempotencyKey; php-sdk testA429IsRetriedAndReusesTheIdempotencyKey
    server.script({ status: 429, body: F.RATE_LIMITED, headers: { 'Retry-After': '0' } }, { status: 200, body: F.SESSION });
    expect(await client({ maxRetries: 2 }).transactions.initialize(INPUT, { idempotencyKey: 'order_9' })).toEqual(F.SESSION);
    expect(server.calls.map((c) => c.headers['x-idempotency-key'])).toEqual(['order_9', 'order_9']);
    expect(waits).toEqual([0]);
  });
});

describe('verify and cancel', () => {
  it('reads the verify receipt as recorded: its null email, and no currencyCode (go-sdk types.go VerifiedPayment has it nullable)', async () => {
    // go-sdk TestVerifyReturnsTheReceipt, verbatim
    server.script({ status: 200, body: F.RECEIPT });
    const receipt = await client().transactions.verify('PAB1');
    expect(server.calls[0]!.path).toBe('/v1/transactions/PAB1/verify');
    expect(receipt).toMatchObject({ serviceFee: '7.50', customer: { name: 'Abebe Bikila', email: null }, currencyCode: null });
    expect(receipt.merchantReference).toBeNull(); // left out: null
    expect(receipt.mode).toBe('sandbox'); // from the sk_test_ key
  });

  it('names the missing reference of a receipt that has only status and serviceFee', async () => {
    // php-sdk testVerifyHitsTheVerifyPath
    server.script({ status: 200, body: { status: 'completed', serviceFee: '7.50' } });
    expect((await rejection(client().transactions.verify('PAB12CD3420260813'))).serviceMessage).toMatch(/"reference" is missing/);
    expect(server.calls[0]!.path).toBe('/v1/transactions/PAB12CD3420260813/verify');
  });

  it('keeps the service words of the 400 for a transaction not completed', async () => {
    // go-sdk TestVerifyReportsAnIncompleteTransaction; php-sdk testVerifyReportsAnIncompleteTransaction
    server.script({ status: 400, body: F.NOT_COMPLETED });
    const error = await rejection(client().transactions.verify('PAB1'));
    expect(error).toMatchObject({ status: 400, serviceMessage: 'Transaction is not completed. Current status: pending' });
    expect(error.message).toContain('Current status: pending');
  });

  it('resolves on a bare 204, and never retries a cancel that got 500', async () => {
    // go-sdk TestCancelSucceedsOn204AndIsNeverRetried; php-sdk testCancelResolvesOn204, testCancelIsNeverRetried
    server.script({ status: 204 });
    await expect(client().transactions.cancel('PAB12CD3420260813')).resolves.toBeUndefined();
    expect([server.calls[0]!.method, server.calls[0]!.path]).toEqual(['POST', '/v1/transactions/PAB12CD3420260813/cancel']);
    server.script({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    expect((await rejection(client({ maxRetries: 3 }).transactions.cancel('PAB1'))).status).toBe(500);
    expect(server.calls).toHaveLength(1);
  });

  it('refuses an empty reference without a request', async () => {
    // go-sdk TestEmptyReferencesAreRejectedLocally
    server.script();
    expect(await rejection(client().transactions.retrieve(''))).toMatchObject({ status: 400, request: { sent: false } });
    expect(await rejection(client().transactions.cancel(''))).toMatchObject({ status: 400, request: { sent: false } });
    expect(server.calls).toHaveLength(0);
  });
});

describe('transactions', () => {
  it('sends the list filters as status, currency, from and to', async () => {
    // go-sdk TestListBuildsTheDocumentedQuery; php-sdk testListBuildsTheDocumentedQuery (they upper-case "etb"; we refuse it, so ETB)
    server.script({ status: 200, body: F.EMPTY_PAGE });
    expect(await client().transactions.list({ status: 'completed', currency: 'ETB', from: '2026-08-01', to: '2026-08-31' })).toEqual(
      F.EMPTY_PAGE,
    );
    const query = Object.fromEntries(server.calls[0]!.query);
    expect(query).toEqual({ status: 'completed', currency: 'ETB', from: '2026-08-01', to: '2026-08-31' });
    expect(server.calls[0]!.path).toBe('/v1/transactions');
  });

  it('refuses an inverted range and an unknown status without a request', async () => {
    // go-sdk TestListRejectsAnInvertedRangeAndUnknownStatus; php-sdk testListRejectsAnInvertedRangeAndUnknownStatus
    server.script();
    await rejection(client().transactions.list({ from: '2026-08-31', to: '2026-08-01' }));
    await rejection(client().transactions.list({ status: 'expired' as never }));
    expect(server.calls).toHaveLength(0);
  });

  it('walks every page with listAll: the cursor advances, the filter stays', async () => {
    // go-sdk TestIterateWalksEveryPageAndKeepsFilters; php-sdk testIteratingAPageWalksEveryFollowingPage
    server.script(...F.PAGES.map((body) => ({ status: 200, body })));
    const seen: string[] = [];
    for await (const t of client().transactions.listAll({ status: 'completed' })) seen.push(t.reference);
    expect(seen).toEqual(['P1', 'P2', 'P3', 'P4']);
    expect(server.calls.map((c) => c.query.get('cursor'))).toEqual([null, 'cur_1', 'cur_2']);
    expect(server.calls.map((c) => c.query.get('status'))).toEqual(['completed', 'completed', 'completed']);
  });

  it('returns a page with its records completed: nulls for what a row leaves out, the key mode', async () => {
    // go-sdk TestIterateWalksEveryPageAndKeepsFilters (first page)
    server.script({ status: 200, body: F.PAGES[0] });
    const page = await client({ apiKey: 'sk_live_abc123' }).transactions.list({ status: 'completed' });
    expect(page).toMatchObject({ nextCursor: 'cur_1', hasMore: true });
    expect(page.data[0]).toMatchObject({
      reference: 'P1',
      currencyCode: 'ETB',
      serviceFee: null,
      customer: null,
      paymentMethod: null,
      mode: 'live',
    });
  });

  it('asks for no page it does not need when the caller stops early', async () => {
    // go-sdk TestCollectStopsAtTheLimit (its row, createdAt "x" included)
    const r = { reference: 'P', status: 'pending', amount: '1.00', currencyCode: 'ETB', createdAt: 'x' };
    server.script(
      { status: 200, body: { data: [r, r], nextCursor: 'cur_1', hasMore: true } },
      { status: 200, body: { data: [r], nextCursor: 'cur_2', hasMore: true } },
    );
    const collected: unknown[] = [];
    for await (const t of client().transactions.listAll()) if (collected.push(t) >= 3) break;
    expect(collected).toHaveLength(3);
    expect(server.calls).toHaveLength(2);
  });

  it('names the missing amount of a row that has only reference and status', async () => {
    // php-sdk testToArrayStopsFetchingOnceTheLimitIsReached (its row)
    server.script({ status: 200, body: { data: [{ reference: 'P', status: 'pending' }], nextCursor: null, hasMore: false } });
    expect((await rejection(client().transactions.list())).serviceMessage).toMatch(/"data\.0\.amount" is missing/);
  });

  it('reads the timeline with its error details', async () => {
    // go-sdk TestTimelineDecodesErrorDetails
    server.script({ status: 200, body: F.TIMELINE });
    const timeline = await client().transactions.timeline('PFF98AB1220260812');
    expect(server.calls[0]!.path).toBe('/v1/transactions/PFF98AB1220260812/timeline');
    expect(timeline).toEqual(F.TIMELINE);
  });

  it('percent-encodes the reference in the path', async () => {
    // php-sdk testReferencesAreUrlEncoded (its `[]` answer is not a record: the error says so)
    server.script({ status: 200, body: [] });
    expect((await rejection(client().transactions.retrieve('PAB 1/2'))).serviceMessage).toMatch(/the body is invalid \(.*expected object/);
    expect(server.calls[0]!.path).toBe('/v1/transactions/PAB%201%2F2');
  });

  it('retries a GET after a 503, and names the missing field of a bare {"reference":"P1"}', async () => {
    // go-sdk TestA5xxOnAGetIsRetriedAndA4xxIsNot; php-sdk testA5xxOnAGetIsRetried
    server.script({ status: 503 }, { status: 200, body: { reference: 'P1' } });
    expect((await rejection(client({ maxRetries: 1 }).transactions.retrieve('P1'))).serviceMessage).toMatch(/"status" is missing/);
    expect(server.calls).toHaveLength(2);
  });

  it('names the missing reference of an empty {} answer', async () => {
    // go-sdk TestDefaultHeadersAreSentOnEveryRequest (its `{}` retrieve reply)
    server.script({ status: 200, body: {} });
    const error = await rejection(client().transactions.retrieve('P1'));
    expect(error.message).toMatch(
      /^\[@payhook\/client\] GET \/v1\/transactions\/P1 failed with 200: the answer does not have the documented shape: field "reference" is missing/,
    );
  });
});

describe('errors and retries', () => {
  it('does not retry a 401, and keeps its message', async () => {
    // go-sdk TestA5xxOnAGetIsRetriedAndA4xxIsNot; php-sdk testA4xxIsNotRetried
    server.script({ status: 401, body: { status: 'error', data: { message: 'Invalid API key' } } });
    expect(await rejection(client({ maxRetries: 3 }).transactions.retrieve('P1'))).toMatchObject({
      status: 401,
      serviceMessage: 'Invalid API key',
    });
    expect(server.calls).toHaveLength(1);
  });

  it('gives up on 429 after its retries, with the last Retry-After', async () => {
    // go-sdk TestTheRateLimitErrorSurfacesAfterTheBudget; php-sdk testTheRateLimitErrorExposesRetryAfter
    server.script({ status: 429, headers: { 'Retry-After': '0' } }, { status: 429, headers: { 'Retry-After': '30' } });
    expect(await rejection(client({ maxRetries: 1 }).transactions.retrieve('P1'))).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    expect(server.calls).toHaveLength(2);
  });

  it('carries the status, the message and the request of a 404', async () => {
    // php-sdk testErrorsCarryTheStatusBodyAndRequest
    server.script({ status: 404, body: { status: 'error', data: { message: 'gone' } } });
    const error = await rejection(client().transactions.retrieve('P1'));
    expect(error).toMatchObject({ status: 404, serviceMessage: 'gone', request: { method: 'GET', sent: true } });
    expect(new URL(error.request.url).pathname).toBe('/v1/transactions/P1');
  });

  it('takes the mode from the key prefix', () => {
    // go-sdk TestNewClientDerivesModeFromTheKeyPrefix; php-sdk testTheClientDerivesModeFromTheKeyPrefix, testANonSecretKeyIsRejected
    expect(client({ apiKey: 'sk_live_abc123' }).mode).toBe('live');
    expect(client({ apiKey: 'sk_test_abc123' }).mode).toBe('sandbox');
    expect(() => client({ apiKey: 'pk_live_abc123' })).toThrow(/^\[@payhook\/client\] apiKey must be a secret key/);
  });
});

describe('payment providers', () => {
  it('unwraps GET /v1/payment-providers/list', async () => {
    // go-sdk TestProvidersAreUnwrappedFromTheEnvelope; php-sdk testProvidersAreUnwrappedFromTheEnvelope
    server.script({ status: 200, body: F.PROVIDER_ITEMS });
    expect(await client().providers.list()).toEqual(F.PROVIDER_ITEMS.data);
    expect([server.calls[0]!.method, server.calls[0]!.path]).toEqual(['GET', '/v1/payment-providers/list']);
    expect(server.calls[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('keeps the enabled providers of GET /v1/payment-providers', async () => {
    // go-sdk TestListEnabledFiltersDisabledProviders; php-sdk testListEnabledFiltersOutDisabledProviders
    server.script({ status: 200, body: F.PROVIDERS });
    const enabled = await client().providers.listEnabled();
    expect(enabled.map((p) => p.providerCode)).toEqual(['cbe_birr']);
    expect(enabled[0]).toMatchObject({ providerName: null, isEnabled: true });
    expect(server.calls[0]!.path).toBe('/v1/payment-providers');
  });

  it('keeps the words of a 403 that is not in the error envelope', async () => {
    // go-sdk TestAMissingPermissionIsPermissionDenied; php-sdk testAMissingPermissionSurfacesAsPermissionDenied
    server.script({ status: 403, body: F.MISSING_PERMISSION });
    const error = await rejection(client().providers.getAll());
    expect(error).toMatchObject({ status: 403, serviceMessage: 'Missing get_platform_payment_provider permission' });
    expect(error.message).toContain('get_platform_payment_provider');
  });
});
