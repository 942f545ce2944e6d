import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, NO_SOURCE_KEY, start, validInput, type Started } from '@payhook/test-support/apps/reference-service';

let s: Started;
let cursor: string;
const page = (c: string, query = 'currency=ETB', key?: string) =>
  s.call('GET', `/v1/transactions?${query}&cursor=${encodeURIComponent(c)}`, { key });

beforeAll(async () => {
  // A high limit: this suite sends many requests on purpose; the rate limit has its own suite.
  s = await start({ rateLimit: { limit: 100_000 } });
  // 12 transactions: two pages of 10 and 2 (the page size is fixed).
  for (let i = 0; i < 12; i++) await s.call('POST', '/v1/transactions/initialize', { body: validInput({ merchantReference: `c-${i}` }) });
  cursor = (await s.call('GET', '/v1/transactions?currency=ETB')).json.nextCursor;
});
afterAll(() => s.close());

describe('list cursors are tamper-evident, bound and short-lived', () => {
  it('the untouched cursor works', async () => {
    const res = await page(cursor);
    expect(res.status).toBe(200);
    expect([res.json.data.length, res.json.hasMore, res.json.nextCursor]).toEqual([2, false, null]);
  });

  it('hand-made tampering gets 400 "malformed": edited position, forged HMAC, extra parts, other filters, other merchant', async () => {
    const [body, sig] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const edit = (p: unknown) => Buffer.from(JSON.stringify(p)).toString('base64url');
    const bad = [
      `${edit({ ...payload, p: 1_000_000 })}.${sig}`, // later position, old MAC
      `${edit({ ...payload, e: payload.e + 86_400_000 })}.${sig}`, // extended lifetime
      `${body}.${Buffer.alloc(32).toString('base64url')}`, // zero MAC
      `${body}.${sig.slice(0, 20)}`, // short MAC
      `${body}.${sig}${sig}`, // long MAC
      `${body}.${sig}.x`,
      `${body}`,
      `.${sig}`,
      '',
      'a'.repeat(4096),
      `${edit({ p: '__proto__', e: 'x' })}.${sig}`,
      `${Buffer.from('{"__proto__":{"polluted":1}}').toString('base64url')}.${sig}`,
    ];
    for (const c of bad) {
      const res = await page(c);
      if (c === '') expect(res.status, 'empty cursor').toBe(400);
      else expectError(res, 400, /^cursor is malformed/);
    }
    expectError(await page(cursor, 'currency=USD'), 400, /^cursor is malformed/);
    expectError(await page(cursor, 'currency=ETB&status=pending'), 400, /^cursor is malformed/);
    expectError(await page(cursor, 'currency=ETB&to=2999-01-01'), 400, /^cursor is malformed/);
    // Another merchant's key: the cursor is bound to the merchant and mode.
    expectError(await page(cursor, 'currency=ETB', NO_SOURCE_KEY), 400, /^cursor is malformed/);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('property: any change to a valid cursor is a 400, never a 200 or a 5xx (seeded)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: cursor.length - 1 }), fc.constantFrom(...'ABCDEFabcdef0123456789-_.='), async (at, char) => {
        fc.pre(cursor[at] !== char);
        const changed = cursor.slice(0, at) + char + cursor.slice(at + 1);
        const res = await page(changed);
        // base64url ignores the padding bits of the last character: such a change decodes to the same bytes.
        const same =
          Buffer.from(changed.split('.')[0] ?? '', 'base64url').equals(Buffer.from(cursor.split('.')[0]!, 'base64url')) &&
          Buffer.from(changed.split('.')[1] ?? '', 'base64url').equals(Buffer.from(cursor.split('.')[1]!, 'base64url')) &&
          changed.split('.').length === 2;
        return same ? res.status === 200 : res.status === 400;
      }),
      { seed: 4242, numRuns: 300 },
    );
  }, 60_000);

  it('an expired cursor gets 400 "expired" after 15 minutes of the service clock, and works until then', async () => {
    const fresh = (await s.call('GET', '/v1/transactions?currency=ETB')).json.nextCursor as string;
    await s.service.clock.advance(15 * 60_000 - 1);
    expect((await page(fresh)).status).toBe(200);
    await s.service.clock.advance(1);
    expectError(await page(fresh), 400, /^cursor has expired/);
  });
});
