import { initializeResultSchema, timelineSchema, transactionRecordSchema } from '@payhook/core/api';
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
} from '@payhook/test-support/apps/reference-service';

// Black box: every request goes over real HTTP to a server on 127.0.0.1, port 0.
let s: Started;
beforeEach(async () => {
  s = await start();
});
afterEach(async () => {
  await s.close();
});

const sandbox = (reference: string, action: string, body?: unknown) =>
  s.call('POST', `/_sandbox/transactions/${reference}/${action}`, { body });

describe('section 4: endpoints', () => {
  it('initialize answers 200 with a bare { reference, checkoutUrl, status, expiresAt }; the session lasts one hour', async () => {
    await s.service.clock.advance(Date.parse('2099-08-13T10:00:00.000Z') - s.service.clock.now());
    const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput() });
    expect(res.status).toBe(200);
    const data = initializeResultSchema.parse(res.json);
    expect(Object.keys(res.json)).toEqual(['reference', 'checkoutUrl', 'status', 'expiresAt']);
    // P + 8 upper-case hex + yyyymmdd of the creation date on the service clock.
    expect(data.reference).toMatch(/^P[0-9A-F]{8}20990813$/);
    expect(data).toEqual({
      reference: data.reference,
      checkoutUrl: `${s.url}/checkout/${data.reference}`,
      status: 'success',
      expiresAt: '2099-08-13T11:00:00.000Z',
    });
    const record = (await s.call('GET', `/v1/transactions/${data.reference}`)).json;
    expect([record.createdAt, record.expiresAt]).toEqual(['2099-08-13T10:00:00.000Z', '2099-08-13T11:00:00.000Z']);
  });

  it('references are unique and carry the creation day of the service clock', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 30; i++) made.add(await s.initialize());
    expect(made.size).toBe(30);
    const day = new Date(s.service.clock.now()).toISOString().slice(0, 10).replaceAll('-', '');
    for (const reference of made) expect(reference).toMatch(new RegExp(`^P[0-9A-F]{8}${day}$`));
    await s.service.clock.advance(24 * 60 * 60 * 1000);
    const next = new Date(s.service.clock.now()).toISOString().slice(0, 10).replaceAll('-', '');
    expect(next).not.toBe(day);
    expect((await s.initialize()).slice(9)).toBe(next);
  });

  it('initialize builds customer.name from firstName and lastName, customer.email from email', async () => {
    const cases: [Record<string, unknown>, { name: string; email: string }][] = [
      [
        { firstName: 'Abebe', lastName: 'Bikila', email: 'abebe@example.test' },
        { name: 'Abebe Bikila', email: 'abebe@example.test' },
      ],
      [{ firstName: 'Abebe' }, { name: 'Abebe', email: '' }],
      [{ lastName: 'Bikila' }, { name: 'Bikila', email: '' }],
      [{}, { name: '', email: '' }],
    ];
    for (const [fields, customer] of cases) {
      const reference = await s.initialize(fields);
      expect((await s.call('GET', `/v1/transactions/${reference}`)).json.customer).toEqual({ ...customer, phone: '251912345678' });
    }
    expectError(await s.call('POST', '/v1/transactions/initialize', { body: validInput({ email: 'not-an-email' }) }), 400, /^email must/);
  });

  it('returnUrl: https is kept; http is refused without --allow-http-callbacks', async () => {
    expect(
      (await s.call('POST', '/v1/transactions/initialize', { body: validInput({ returnUrl: 'https://shop.example/done' }) })).status,
    ).toBe(200);
    expectError(
      await s.call('POST', '/v1/transactions/initialize', { body: validInput({ returnUrl: 'http://localhost:3000/done' }) }),
      400,
      /^returnUrl must/,
    );
    expectError(
      await s.call('POST', '/v1/transactions/initialize', { body: validInput({ returnUrl: 'shop/done' }) }),
      400,
      /^returnUrl must/,
    );
    const dev = await start({ allowHttpCallbacks: true });
    try {
      const local = await dev.call('POST', '/v1/transactions/initialize', {
        body: validInput({ returnUrl: 'http://127.0.0.1:3000/done' }),
      });
      expect(local.status).toBe(200);
      expect(dev.service.snapshot().transactions.find((t) => t.reference === local.json.reference)?.returnUrl).toBe(
        'http://127.0.0.1:3000/done',
      );
      const remote = await dev.call('POST', '/v1/transactions/initialize', { body: validInput({ returnUrl: 'http://shop.example/done' }) });
      expectError(remote, 400, /^returnUrl must/);
    } finally {
      await dev.close();
    }
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
      const reference = await s.initialize({ customerPhone: given });
      const res = await s.call('GET', `/v1/transactions/${reference}`);
      expect(res.json.customer.phone).toBe(canonical);
    }
  });

  it('the same idempotency key returns the original response and creates no new transaction', async () => {
    const headers = { 'x-idempotency-key': 'order-1-attempt' };
    const first = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    const again = await s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The same reference, checkoutUrl, status and expiresAt.
    expect(again.json).toEqual(first.json);
    expect(Object.keys(again.json)).toEqual(['reference', 'checkoutUrl', 'status', 'expiresAt']);
    const list = await s.call('GET', '/v1/transactions');
    expect(list.json.data).toHaveLength(1);
  });

  it('20 concurrent initializations with one idempotency key make one transaction', async () => {
    const headers = { 'x-idempotency-key': 'concurrent-key' };
    const all = await Promise.all(
      Array.from({ length: 20 }, () => s.call('POST', '/v1/transactions/initialize', { body: validInput(), headers })),
    );
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(all.map((r) => r.json.reference)).size).toBe(1);
    expect((await s.call('GET', '/v1/transactions')).json.data).toHaveLength(1);
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
    expect(later.json.reference).not.toBe(first.json.reference);
  });

  it('verify returns the bare record once it is completed: currencyCode, serviceFee, paymentMethod', async () => {
    const reference = await s.initialize({ firstName: 'Abebe', lastName: 'Bikila' });
    await s.service.clock.advance(5_000);
    await sandbox(reference, 'pay', { paymentMethod: 'cbe_birr' });
    const res = await s.call('GET', `/v1/transactions/${reference}/verify`);
    expect(res.status).toBe(200);
    const record = transactionRecordSchema.parse(res.json);
    expect(Object.keys(res.json)).toEqual([
      'reference',
      'merchantReference',
      'status',
      'amount',
      'serviceFee',
      'currencyCode',
      'paymentMethod',
      'customer',
      'paidAt',
      'createdAt',
      'mode',
      'checkoutUrl',
      'updatedAt',
      'expiresAt',
    ]);
    expect(record).toMatchObject({
      reference,
      status: 'completed',
      amount: '100.00',
      serviceFee: '3.50',
      currencyCode: 'ETB',
      paymentMethod: 'cbe_birr',
      mode: 'sandbox',
    });
    expect(res.json).not.toHaveProperty('currency');
    expect(Date.parse(record.paidAt!) - Date.parse(record.createdAt)).toBe(5_000);
    expect(record.updatedAt).toBe(record.paidAt);
  });

  it('cancel answers 204 with no body, from pending and from processing', async () => {
    const pending = await s.initialize();
    const processing = await s.initialize();
    expect((await sandbox(processing, 'open')).json.status).toBe('processing');
    for (const reference of [pending, processing]) {
      const res = await s.call('POST', `/v1/transactions/${reference}/cancel`);
      expect(res.status).toBe(204);
      expect(res.json).toBe('');
      expect(res.headers.get('content-type')).toBeNull();
      expect((await s.call('GET', `/v1/transactions/${reference}`)).json.status).toBe('cancelled');
    }
  });

  it('retrieve returns one bare record; paymentMethod is null until the payment is made or fails', async () => {
    const reference = await s.initialize({ merchantReference: 'order-42', firstName: 'Abebe', email: 'a@example.test' });
    await sandbox(reference, 'open');
    const res = await s.call('GET', `/v1/transactions/${reference}`);
    expect(res.status).toBe(200);
    expect(transactionRecordSchema.parse(res.json)).toMatchObject({
      reference,
      merchantReference: 'order-42',
      status: 'processing',
      currencyCode: 'ETB',
      paymentMethod: null,
      paidAt: null,
      customer: { name: 'Abebe', email: 'a@example.test', phone: '251912345678' },
    });
    await sandbox(reference, 'fail', { paymentMethod: 'mpesa' });
    expect((await s.call('GET', `/v1/transactions/${reference}`)).json).toMatchObject({
      status: 'failed',
      paymentMethod: 'mpesa',
      paidAt: null,
    });
  });

  it('timeline: { reference, events }, oldest first, with eventType, occurredAt, errorCode, errorMessage, status', async () => {
    const reference = await s.initialize();
    await s.service.clock.advance(1_000);
    await sandbox(reference, 'open');
    await sandbox(reference, 'pay');
    await sandbox(reference, 'refund');
    await sandbox(reference, 'complete-refund');
    const res = await s.call('GET', `/v1/transactions/${reference}/timeline`);
    expect(res.status).toBe(200);
    const timeline = timelineSchema.parse(res.json);
    expect(timeline.reference).toBe(reference);
    expect(timeline.events.map((e) => [e.eventType, e.status, e.errorCode, e.errorMessage])).toEqual([
      ['session_created', 'pending', null, null],
      ['checkout_opened', 'processing', null, null],
      ['payment_completed', 'completed', null, null],
      ['refund_initiated', 'refunding', null, null],
      ['refund_completed', 'refunded', null, null],
    ]);
    expect(Object.keys(res.json.events[0])).toEqual(['eventType', 'occurredAt', 'errorCode', 'errorMessage', 'status']);
    expect(Date.parse(timeline.events[1]!.occurredAt) - Date.parse(timeline.events[0]!.occurredAt)).toBe(1_000);
  });

  it('timeline: a failure carries its errorCode (PAYMENT_FAILED by default) and message; cancel and reverse are named', async () => {
    const failed = await s.initialize();
    await sandbox(failed, 'fail');
    const coded = await s.initialize();
    await sandbox(coded, 'fail', { errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'no balance' });
    const declined = await s.initialize();
    await sandbox(declined, 'fail', { errorCode: 'PAYMENT_DECLINED' });
    const last = async (reference: string) => (await s.call('GET', `/v1/transactions/${reference}/timeline`)).json.events.at(-1);
    expect(await last(failed)).toMatchObject({
      eventType: 'payment_failed',
      status: 'failed',
      errorCode: 'PAYMENT_FAILED',
      errorMessage: expect.stringMatching(/failed/),
    });
    expect(await last(coded)).toMatchObject({ eventType: 'payment_failed', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'no balance' });
    expect(await last(declined)).toMatchObject({ errorCode: 'PAYMENT_DECLINED', errorMessage: expect.stringMatching(/declined/) });
    const cancelled = await s.initialize();
    await s.call('POST', `/v1/transactions/${cancelled}/cancel`);
    expect(await last(cancelled)).toMatchObject({
      eventType: 'payment_cancelled',
      status: 'cancelled',
      errorCode: null,
      errorMessage: null,
    });
    const reversed = await s.initialize();
    await sandbox(reversed, 'pay');
    await sandbox(reversed, 'reverse');
    expect(await last(reversed)).toMatchObject({ eventType: 'payment_reversed', status: 'reversed', errorCode: null });
    expectError(await sandbox(await s.initialize(), 'fail', { errorCode: 'lower case' }), 400, /^errorCode must/);
  });

  it('a per-transaction http:// callbackUrl is refused without --allow-http-callbacks', async () => {
    const res = await s.call('POST', '/v1/transactions/initialize', {
      body: validInput({ callbackUrl: 'http://127.0.0.1:9/webhooks' }),
    });
    expectError(res, 400, /https/);
    const ok = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ callbackUrl: 'https://shop.example/webhooks' }) });
    expect(ok.status).toBe(200);
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
      /^Missing transactions:initialize permission/,
    );
    expect((await s.call('GET', '/v1/transactions', { key: READ_ONLY_KEY })).status).toBe(200);
  });

  it('the key prefix selects the environment: live and sandbox never see each other', async () => {
    const live = await s.initialize({}, LIVE_KEY);
    expect((await s.call('GET', `/v1/transactions/${live}`, { key: LIVE_KEY })).json.mode).toBe('live');
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
    expect(ok.status).toBe(200);
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
    const reference = await s.initialize();
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is pending, not completed/);
    await sandbox(reference, 'open');
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is processing, not completed/);
    await sandbox(reference, 'fail');
    expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 400, /is failed, not completed/);
  });

  it('404: verify, cancel, retrieve and timeline of a reference not under the account', async () => {
    const other = await s.initialize({}, LIVE_KEY);
    for (const reference of ['PAB12CD3420260813', 'ref_unknown', other]) {
      expectError(await s.call('GET', `/v1/transactions/${reference}/verify`), 404, /No transaction/);
      expectError(await s.call('POST', `/v1/transactions/${reference}/cancel`), 404, /No transaction/);
      expectError(await s.call('GET', `/v1/transactions/${reference}`), 404, /No transaction/);
      expectError(await s.call('GET', `/v1/transactions/${reference}/timeline`), 404, /No transaction/);
    }
  });

  it('400: cancel when the status is not pending or processing', async () => {
    const completed = await s.initialize();
    await sandbox(completed, 'pay');
    const cancelled = await s.initialize();
    await s.call('POST', `/v1/transactions/${cancelled}/cancel`);
    for (const [reference, status] of [
      [completed, 'completed'],
      [cancelled, 'cancelled'],
    ]) {
      expectError(
        await s.call('POST', `/v1/transactions/${reference}/cancel`),
        400,
        new RegExp(`status is ${status}.*pending or processing`),
      );
    }
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
    const reference = await s.initialize();
    expectError(await sandbox(reference, 'refund'), 400, /status is pending, and refund is allowed only from completed/);
    expectError(await sandbox(reference, 'explode'), 404, /Unknown sandbox action/);
    await sandbox(reference, 'pay');
    expectError(await sandbox(reference, 'pay'), 400);
    const refunding = await sandbox(reference, 'refund');
    // Sandbox control answers the bare record too.
    expect(transactionRecordSchema.parse(refunding.json)).toMatchObject({ reference, status: 'refunding' });
    expect((await sandbox(reference, 'complete-refund')).json.status).toBe('refunded');
    expect((await s.call('GET', '/_sandbox/clock')).json).toEqual({ now: expect.any(String) });
  });

  it('sandbox test numbers: 251900000010 is paid at initialize, 251900000011 fails', async () => {
    const paid = await s.initialize({ customerPhone: '0900000010' });
    const failed = await s.initialize({ customerPhone: '0900000011' });
    expect((await s.call('GET', `/v1/transactions/${paid}`)).json).toMatchObject({ status: 'completed', paymentMethod: 'telebirr' });
    expect((await s.call('GET', `/v1/transactions/${failed}`)).json.status).toBe('failed');
    const events = (await s.call('GET', `/v1/transactions/${failed}/timeline`)).json.events as {
      eventType: string;
      errorCode: string | null;
    }[];
    expect(events.map((e) => [e.eventType, e.errorCode])).toEqual([
      ['session_created', null],
      ['payment_failed', 'PAYMENT_DECLINED'],
    ]);
  });

  it('the clock endpoint validates its body', async () => {
    expectError(await s.call('POST', '/_sandbox/clock/advance', { body: { ms: -1 } }), 400, /negative/);
    expectError(await s.call('POST', '/_sandbox/clock/advance', { body: {} }), 400, /ms is required/);
  });
});
