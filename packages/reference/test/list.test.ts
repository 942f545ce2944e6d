import { listPageSchema, PAGE_SIZE } from '@payhook/core/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, start, type Started } from '@payhook/test-support/apps/reference-service';

// Black box: every request goes over real HTTP to a server on 127.0.0.1, port 0.
let s: Started;
beforeEach(async () => {
  s = await start();
});
afterEach(async () => {
  await s.close();
});

const sandbox = (reference: string, action: string) => s.call('POST', `/_sandbox/transactions/${reference}/${action}`);

const references = (res: { json: { data: { reference: string }[] } }) => res.json.data.map((t) => t.reference);

describe('GET /v1/transactions', () => {
  it(`list: { data, nextCursor, hasMore }, ${PAGE_SIZE} a page, newest first, paging to the end`, async () => {
    const made = [];
    for (let i = 0; i < 2 * PAGE_SIZE + 1; i++) made.push(await s.initialize({ merchantReference: `o-${i}` }));
    const seen: string[] = [];
    const sizes: [number, boolean][] = [];
    let cursor: string | null = null;
    do {
      const res = await s.call('GET', `/v1/transactions${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['data', 'nextCursor', 'hasMore']);
      const page = listPageSchema.parse(res.json);
      expect(page.hasMore).toBe(page.nextCursor !== null);
      seen.push(...page.data.map((t) => t.reference));
      sizes.push([page.data.length, page.hasMore]);
      cursor = page.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([
      [10, true],
      [10, true],
      [1, false],
    ]);
    expect(seen).toEqual(made.reverse());
  });

  it('list: exactly one full page has hasMore false; an empty list too', async () => {
    expect((await s.call('GET', '/v1/transactions')).json).toEqual({ data: [], nextCursor: null, hasMore: false });
    for (let i = 0; i < PAGE_SIZE; i++) await s.initialize();
    const page = (await s.call('GET', '/v1/transactions')).json;
    expect([page.data.length, page.nextCursor, page.hasMore]).toEqual([PAGE_SIZE, null, false]);
  });

  it('list filters by currency, status and date range', async () => {
    const etb = await s.initialize();
    const usd = await s.initialize({ currencyCode: 'USD' });
    await sandbox(usd, 'pay');
    expect(references(await s.call('GET', '/v1/transactions?currency=USD'))).toEqual([usd]);
    expect(references(await s.call('GET', '/v1/transactions?status=pending'))).toEqual([etb]);
    expect((await s.call('GET', '/v1/transactions?from=2999-01-01&to=2999-02-01')).json.data).toEqual([]);
  });

  it('list: a date-only to covers that whole day, to 23:59:59.999Z; a date-only from starts at midnight', async () => {
    await s.service.clock.advance(Date.parse('2099-08-31T00:00:00.000Z') - s.service.clock.now());
    const midnight = await s.initialize();
    await s.service.clock.advance(24 * 60 * 60 * 1000 - 1);
    const lastMs = await s.initialize();
    await s.service.clock.advance(1);
    const nextDay = await s.initialize();
    expect(references(await s.call('GET', '/v1/transactions?from=2099-08-01&to=2099-08-31'))).toEqual([lastMs, midnight]);
    expect(references(await s.call('GET', '/v1/transactions?to=2099-08-31T12:00:00Z'))).toEqual([midnight]);
    expect(references(await s.call('GET', '/v1/transactions?from=2099-09-01'))).toEqual([nextDay]);
    expect(references(await s.call('GET', '/v1/transactions?from=2099-08-31T12:00:00Z&to=2099-08-31'))).toEqual([lastMs]);
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
    // Date-only values count as written: 2025-01-01 to 2025-04-01 is 90 days, though it covers all of April 1st.
    expect((await s.call('GET', '/v1/transactions?from=2025-01-01&to=2025-04-01')).status).toBe(200);
    expectError(await s.call('GET', '/v1/transactions?from=2025-01-01&to=2025-04-02'), 400, /90 days/);
    expectError(await s.call('GET', '/v1/transactions?from=2025-02-01&to=2025-01-31'), 400, 'from must not be after to');
  });

  it('400: an unknown list parameter (limit too) names it and lists the accepted ones', async () => {
    for (const name of ['limit', 'page', 'Status', 'currencyCode']) {
      const res = await s.call('GET', `/v1/transactions?status=pending&${name}=1`);
      expectError(res, 400, new RegExp(`^${name} is not a list parameter: .*from, to, currency, status, cursor`));
    }
  });

  it('400: a list parameter given twice names it', async () => {
    for (const query of ['status=pending&status=completed', 'from=2025-01-01&from=2025-01-01', 'cursor=a&cursor=b', 'limit=1&limit=2']) {
      const name = query.split('=')[0]!;
      expectError(
        await s.call('GET', `/v1/transactions?${query}`),
        400,
        new RegExp(`^${name} is given more than once: .*from, to, currency, status, cursor`),
      );
    }
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

  async function firstCursor(): Promise<string> {
    for (let i = 0; i <= PAGE_SIZE; i++) await s.initialize();
    const res = await s.call('GET', '/v1/transactions');
    expect(res.json.nextCursor).toEqual(expect.any(String));
    return res.json.nextCursor;
  }

  it('400: list cursor tampered with or malformed', async () => {
    const cursor = await firstCursor();
    const [body, sig] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ p: 999, e: 4102444800000 })).toString('base64url');
    // The signature's first character changed: all six of its bits count, where the last one's lowest two are padding
    // (replacing the last two with 'AA' left 1 signature in 1,024 as it was, and the test failed once in CI).
    const tampered = `${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
    for (const bad of [`${forged}.${sig}`, `${body}.${tampered}`, 'garbage', `${cursor}.x`]) {
      expectError(await s.call('GET', `/v1/transactions?cursor=${encodeURIComponent(bad)}`), 400, /^cursor is malformed/);
    }
    // A cursor is bound to its filters.
    expectError(await s.call('GET', `/v1/transactions?status=pending&cursor=${encodeURIComponent(cursor)}`), 400, /^cursor is malformed/);
    expect((await s.call('GET', `/v1/transactions?cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });

  it('400: list cursor expired after its 15-minute lifetime', async () => {
    const cursor = await firstCursor();
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 14 * 60 * 1000 } });
    expect((await s.call('GET', `/v1/transactions?cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    await s.call('POST', '/_sandbox/clock/advance', { body: { ms: 60 * 1000 } });
    expectError(await s.call('GET', `/v1/transactions?cursor=${encodeURIComponent(cursor)}`), 400, /^cursor has expired/);
  });
});
