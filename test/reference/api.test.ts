import {
  initializeResultSchema,
  listPageSchema,
  successEnvelope,
  timelineSchema,
  transactionRecordSchema,
} from '@payhook/core/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  expectError,
  FAR_KEY,
  LIVE_KEY,
  NO_SOURCE_KEY,
  OTHER_KEY,
  READ_ONLY_KEY,
  REVOKED_KEY,
  SANDBOX_KEY,
  start,
  validInput,
  type Started,
} from './helpers.js';

// Black box: every request goes over real HTTP to a server on 127.0.0.1, port 0.
let s: Started;
beforeEach(async () => {
  s = await start();
});
afterEach(async () => {
  await s.close();
});

async function initialize(overrides: Record<string, unknown> = {}, key = SANDBOX_KEY): Promise<string> {
  const res = await s.call('POST', '/v1/transactions/initialize', { key, body: validInput(overrides) });
  expect(res.status).toBe(201);
  return res.json.data.reference;
}

const sandbox = (reference: string, action: string, body?: unknown) =>
  s.call('POST', `/_sandbox/transactions/${reference}/${action}`, { body });

describe('section 4: endpoints', () => {
  it('initialize answers 201 with reference and checkoutUrl in the success envelope', async () => {
    const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput() });
    expect(res.status).toBe(201);
    const data = successEnvelope(initializeResultSchema).parse(res.json).data;
    expect(data.reference).toMatch(/^ref_/);
    expect(data.checkoutUrl).toBe(`${s.url}/checkout/${data.reference}`);
  });

  it('initialize accepts every Ethiopian phone form and stores the canonical 251 form', async () => {
    const forms = {
      '0912345678': '251912345678',
      '0712345678': '251712345678',
      '912345678': '251912345678',
      '+251912345678': '251912345678',
      '251912345678': '251912345678',
    };
    for (const [given, canonical] of Object.entries(forms)) {
      const reference = await initialize({ customerPhone: given });
      const res = await s.call('GET', `/v1/transactions/${reference}`);
      expect(res.json.data.customer.phone).toBe(canonical);
    }
  });

  it('the same idempotency key returns the original response and creates no new transaction', async () => {
    const headers = { 'x-idempotency-key': 'order-1-attempt' };
    const first = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    const again = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    const list = await s.call('GET', '/v1/transactions');
    expect(list.json.data.items).toHaveLength(1);
  });

  it('20 concurrent initializations with one idempotency key make one transaction', async () => {
    const headers = { 'x-idempotency-key': 'concurrent-key' };
    const all = await Promise.all(
      Array.from({ length: 20 }, () => s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers })),
    );
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(all.map((r) => r.json.data.reference)).size).toBe(1);
    expect((await s.call('GET', '/v1/transactions')).json.data.items).toHaveLength(1);
  });

  it('409: the idempotency key reused with a different body', async () => {
    const headers = { 'x-idempotency-key': 'k-409' };
    await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ amount: '200.00' }), headers });
    expectError(res, 409, /different request body/);
  });

  it('the idempotency key is forgotten after its 24-hour window', async () => {
    const headers = { 'x-idempotency-key': 'k-window' };
    const first = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 24 * 60 * 60 * 1000 } });
    const later = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    expect(later.json.data.reference).not.toBe(first.json.data.reference);
  });

  it('verify returns the transaction once it is completed', async () => {
    const reference = await initialize();
    await sandbox(reference, 'pay');
    const res = await s.call('GET', `/v1/transactions/${reference}/verify`);
    expect(res.status).toBe(200);
    const record = successEnvelope(transactionRecordSchema).parse(res.json).data;
    expect(record).toMatchObject({ reference, status: 'completed', amount: '100.00', serviceFee: '3.50', mode: 'sandbox' });
    expect(record.paidAt).not.toBeNull();
  });

  it('cancel works from pending and from processing', async () => {
    const pending = await initialize();
    const processing = await initialize();
    expect((await sandbox(processing, 'open')).json.data.status).toBe('processing');
    for (const reference of [pending, processing]) {
      const res = await s.call('POST', `/v1/transactions/${reference}/cancel`);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: 'success', data: { reference, status: 'cancelled' } });
    }
  });

  it('list pages newest first with nextCursor until null', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await initialize({ merchantReference: `o-${i}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await s.call('GET', `/v1/transactions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      const page = successEnvelope(listPageSchema).parse(res.json).data;
      seen.push(...page.items.map((t) => t.reference));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(made.reverse());
  });

  it('list filters by currency, status and date range', async () => {
    const etb = await initialize();
    const usd = await initialize({ currencyCode: 'USD' });
    await sandbox(usd, 'pay');
    const byCurrency = await s.call('GET', '/v1/transactions?currency=USD');
    expect(byCurrency.json.data.items.map((t: { reference: string }) => t.reference)).toEqual([usd]);
    const byStatus = await s.call('GET', '/v1/transactions?status=pending');
    expect(byStatus.json.data.items.map((t: { reference: string }) => t.reference)).toEqual([etb]);
    const future = await s.call('GET', '/v1/transactions?from=2999-01-01&to=2999-02-01');
    expect(future.json.data.items).toEqual([]);
  });

  it('retrieve returns one transaction record', async () => {
    const reference = await initialize({ merchantReference: 'order-42', customerName: 'Abebe', customerEmail: 'a@example.test' });
    const res = await s.call('GET', `/v1/transactions/${reference}`);
    expect(res.status).toBe(200);
    expect(successEnvelope(transactionRecordSchema).parse(res.json).data).toMatchObject({
      reference,
      merchantReference: 'order-42',
      status: 'pending',
      currency: 'ETB',
      paidAt: null,
      customer: { name: 'Abebe', email: 'a@example.test', phone: '251912345678' },
    });
  });

  it('timeline lists every step with the event it sent', async () => {
    const reference = await initialize();
    await sandbox(reference, 'open');
    await sandbox(reference, 'pay');
    await sandbox(reference, 'refund');
    const res = await s.call('GET', `/v1/transactions/${reference}/timeline`);
    expect(res.status).toBe(200);
    const timeline = successEnvelope(timelineSchema).parse(res.json).data;
    expect(timeline.entries.map((e) => [e.status, e.event])).toEqual([
      ['pending', null],
      ['processing', null],
      ['completed', 'payment.success'],
      ['refunding', 'payment.refunding'],
    ]);
  });

  it('a per-transaction http:// callbackUrl is refused without --allow-http-callbacks', async () => {
    const res = await s.call('POST', '/v1/transactions/initialize', {
      body: validInput({ callbackUrl: 'http://127.0.0.1:9/webhooks' }),
    });
    expectError(res, 400, /https/);
    const ok = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ callbackUrl: 'https://shop.example/webhooks' }) });
    expect(ok.status).toBe(201);
  });
});

describe('section 5: authentication', () => {
  it('401: missing Authorization header', async () => {
    expectError(await s.call('GET', '/v1/transactions', { key: null }), 401, /Missing Authorization/);
  });

  it('401: malformed Authorization header', async () => {
    for (const header of ['Basic abc', `Bearer`, 'Bearer sk_prod_12345678', `bearer ${SANDBOX_KEY}`, `Bearer ${SANDBOX_KEY} extra`]) {
      const res = await s.call('GET', '/v1/transactions', { key: null, headers: { authorization: header } });
      expectError(res, 401, /Malformed/);
    }
  });

  it('401: unknown key', async () => {
    expectError(await s.call('GET', '/v1/transactions', { key: 'sk_test_not_a_known_key' }), 401, /Invalid API key/);
  });

  it('401: revoked key, from the config and revoked while running', async () => {
    expectError(await s.call('GET', '/v1/transactions', { key: REVOKED_KEY }), 401, /revoked/);
    expect((await s.call('GET', '/v1/transactions', { key: OTHER_KEY })).status).toBe(200);
    expect(s.service.merchants.revokeKey(OTHER_KEY)).toBe(true);
    expectError(await s.call('GET', '/v1/transactions', { key: OTHER_KEY }), 401, /revoked/);
  });

  it('403: the client address is not in the IP whitelist', async () => {
    expectError(await s.call('GET', '/v1/transactions', { key: FAR_KEY }), 403, /127\.0\.0\.1 .*whitelist/);
  });

  it('403: the key lacks the permission the operation needs', async () => {
    expectError(
      await s.call('POST', '/v1/transactions/initialize', { key: READ_ONLY_KEY, body: validInput() }),
      403,
      /transactions:initialize/,
    );
    expect((await s.call('GET', '/v1/transactions', { key: READ_ONLY_KEY })).status).toBe(200);
  });

  it('the key prefix selects the environment: live and sandbox never see each other', async () => {
    const live = await initialize({}, LIVE_KEY);
    expect((await s.call('GET', `/v1/transactions/${live}`, { key: LIVE_KEY })).json.data.mode).toBe('live');
    expectError(await s.call('GET', `/v1/transactions/${live}`, { key: SANDBOX_KEY }), 404);
    expectError(await s.call('POST', `/_sandbox/transactions/${live}/pay`, { key: LIVE_KEY }), 403, /sandbox key/);
  });
});

describe('section 7: errors', () => {
  it('400: amount not a positive numeric string with two decimals', async () => {
    for (const amount of ['abc', '100', '10.5', '-1.00', '0.00', '1e3', 100, '']) {
      const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ amount }) });
      expectError(res, 400, /^amount must/);
    }
  });

  it('400: amount above 999999999.99 (section 8), and the maximum itself is accepted', async () => {
    expectError(
      await s.call('POST', '/v1/transactions/initialize', { body: validInput({ amount: '1000000000.00' }) }),
      400,
      'amount must be at most 999999999.99',
    );
    const ok = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ amount: '999999999.99' }) });
    expect(ok.status).toBe(201);
  });

  it('400: currencyCode not a supported ISO 4217 code', async () => {
    for (const currencyCode of ['EUR', 'etb', 'XXXX', undefined]) {
      const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ currencyCode }) });
      expectError(res, 400, /^currencyCode must be one of the supported ISO 4217 codes: ETB, USD/);
    }
  });

  it('400: customerPhone not in a recognised Ethiopian format', async () => {
    for (const customerPhone of ['12345', '0812345678', '+251812345678', '09123456789', '+1 555 0100']) {
      const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ customerPhone }) });
      expectError(res, 400, /^customerPhone must be an Ethiopian mobile number/);
    }
  });

  it('400: a body that is not JSON', async () => {
    expectError(await s.call('POST', '/v1/transactions/initialize', { body: '{not json' }), 400, /JSON/);
  });

  it('404: initialize without an active payment source', async () => {
    const res = await s.call('POST', '/v1/transactions/initialize', { key: NO_SOURCE_KEY, body: validInput() });
    expectError(res, 404, /No active payment source/);
  });

  it('400: verify before completion names the current status', async () => {
    const reference = await initialize();
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is pending, not completed/);
    await sandbox(reference, 'open');
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is processing, not completed/);
    await sandbox(reference, 'fail');
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is failed, not completed/);
  });

  it('404: verify, cancel, retrieve and timeline of a reference not under the account', async () => {
    const other = await initialize({}, LIVE_KEY);
    for (const reference of ['ref_unknown', other]) {
      expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 404, /No transaction/);
      expectError(await s.call('POST', `/v1/transactions/${reference}/cancel`), 404, /No transaction/);
      expectError(await s.call('GET', `/v1/transactions/${reference}`), 404, /No transaction/);
      expectError(await s.call('GET', `/v1/transactions/${reference}/timeline`), 404, /No transaction/);
    }
  });

  it('400: cancel when the status is not pending or processing', async () => {
    const completed = await initialize();
    await sandbox(completed, 'pay');
    const cancelled = await initialize();
    await s.call('POST', `/v1/transactions/${cancelled}/cancel`);
    for (const [reference, status] of [
      [completed, 'completed'],
      [cancelled, 'cancelled'],
    ]) {
      expectError(await s.call('POST', `/v1/transactions/${reference}/cancel`), 400, new RegExp(`status is ${status}.*pending or processing`));
    }
  });

  it('400: list with from after to', async () => {
    expectError(await s.call('GET', '/v1/transactions?from=2025-02-01&to=2025-01-01'), 400, 'from must not be after to');
  });

  it('400: list range over 90 days (exactly 90 days passes)', async () => {
    expectError(
      await s.call('GET', '/v1/transactions?from=2025-01-01T00:00:00Z&to=2025-04-01T00:00:00.001Z'),
      400,
      'the range between from and to must not exceed 90 days',
    );
    expect((await s.call('GET', '/v1/transactions?from=2025-01-01T00:00:00Z&to=2025-04-01T00:00:00Z')).status).toBe(200);
  });

  it('400: list with a dates that are not dates', async () => {
    expectError(await s.call('GET', '/v1/transactions?from=yesterday'), 400, /^from must be an ISO 8601/);
  });

  it('400: list currency not a valid three-letter ISO 4217 code', async () => {
    for (const currency of ['EURO', 'eu1', 'usd', 'ZZZ']) {
      expectError(await s.call('GET', `/v1/transactions?currency=${currency}`), 400, /^currency must be a three-letter ISO 4217 code/);
    }
    expect((await s.call('GET', '/v1/transactions?currency=EUR')).status).toBe(200);
  });

  it('400: list status not a recognised value', async () => {
    expectError(await s.call('GET', '/v1/transactions?status=paid'), 400, /^status must be one of: pending, processing, completed/);
  });

  async function firstCursor(query = ''): Promise<string> {
    await initialize();
    await initialize();
    const res = await s.call('GET', `/v1/transactions?limit=1${query}`);
    expect(res.json.data.nextCursor).toEqual(expect.any(String));
    return res.json.data.nextCursor;
  }

  it('400: list cursor tampered with or malformed', async () => {
    const cursor = await firstCursor();
    const [body, sig] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ p: 999, e: 4102444800000 })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${body}.${sig.slice(0, -2)}AA`, 'garbage', `${cursor}.x`]) {
      expectError(await s.call('GET', `/v1/transactions?limit=1&cursor=${encodeURIComponent(bad)}`), 400, /^cursor is malformed/);
    }
    // A cursor is bound to its filters.
    expectError(await s.call('GET', `/v1/transactions?limit=1&status=pending&cursor=${encodeURIComponent(cursor)}`), 400, /^cursor is malformed/);
    expect((await s.call('GET', `/v1/transactions?limit=1&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });

  it('400: list cursor expired after its 15-minute lifetime', async () => {
    const cursor = await firstCursor();
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 14 * 60 * 1000 } });
    expect((await s.call('GET', `/v1/transactions?limit=1&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 60 * 1000 } });
    expectError(await s.call('GET', `/v1/transactions?limit=1&cursor=${encodeURIComponent(cursor)}`), 400, /^cursor has expired/);
  });

  it('429 with Retry-After after 100 requests in 60 s for one key; another key is unaffected', async () => {
    for (let i = 0; i < 100; i++) expect((await s.call('GET', '/v1/transactions')).status).toBe(200);
    const limited = await s.call('GET', '/v1/transactions');
    expectError(limited, 429, /Rate limit exceeded/);
    expect(Number(limited.headers.get('retry-after'))).toBe(60);
    expect((await s.call('GET', '/v1/transactions', { key: OTHER_KEY })).status).toBe(200);
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 30_000 } });
    expect(Number((await s.call('GET', '/v1/transactions')).headers.get('retry-after'))).toBe(30);
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 30_000 } });
    expect((await s.call('GET', '/v1/transactions')).status).toBe(200);
  });

  it('404 for an unknown route and 405 for a wrong method, in the envelope', async () => {
    expectError(await s.call('GET', '/nowhere'), 404, /No route/);
    const wrong = await s.call('DELETE', '/v1/transactions');
    expectError(wrong, 405, /DELETE is not allowed/);
    expect(wrong.headers.get('allow')).toBe('GET');
    const getInit = await s.call('GET', '/v1/transactions/initialize');
    expectError(getInit, 405);
    expect(getInit.headers.get('allow')).toBe('POST');
  });

  it('413: a body over 64 KiB', async () => {
    const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ merchantReference: 'x'.repeat(70_000) }) });
    expectError(res, 413, /too large/);
  });
});

describe('section 9: versioning', () => {
  it('every endpoint lives under /v1; another version is a 404 in the envelope', async () => {
    expectError(await s.call('GET', '/v2/transactions'), 404, /Unknown API version v2/);
    expectError(await s.call('GET', '/transactions'), 404);
  });
});

describe('sandbox control', () => {
  it('invalid transitions are 400 in the envelope; unknown actions 404', async () => {
    const reference = await initialize();
    expectError(await sandbox(reference, 'refund'), 400, /status is pending, and refund is allowed only from completed/);
    expectError(await sandbox(reference, 'explode'), 404, /Unknown sandbox action/);
    await sandbox(reference, 'pay');
    expectError(await sandbox(reference, 'pay'), 400);
    expect((await sandbox(reference, 'refund')).json.data.status).toBe('refunding');
    expect((await sandbox(reference, 'complete-refund')).json.data.status).toBe('refunded');
  });

  it('sandbox test numbers: 251900000002 is paid at initialize, 251900000003 fails', async () => {
    const paid = await initialize({ customerPhone: '0900000002' });
    const failed = await initialize({ customerPhone: '0900000003' });
    expect((await s.call('GET', `/v1/transactions/${paid}`)).json.data.status).toBe('completed');
    expect((await s.call('GET', `/v1/transactions/${failed}`)).json.data.status).toBe('failed');
  });

  it('the clock endpoint validates its body', async () => {
    expectError(await s.call('POST', '/_sandbox/clock/advance', { body: { ms: -1 } }), 400, /negative/);
    expectError(await s.call('POST', '/_sandbox/clock/advance', { body: {} }), 400, /ms is required/);
  });
});
