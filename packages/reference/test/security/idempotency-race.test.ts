import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_KEY, start, validInput, type Started } from '@payhook/test-support/apps/reference-service';

let s: Started;
beforeAll(async () => {
  // A high rate limit: the races here send more than 100 requests on purpose; the limit has its own suite.
  s = await start({ rateLimit: { limit: 100_000 } });
});
afterAll(() => s.close());

const initialize = (key: string, body: Record<string, unknown>, apiKey?: string) =>
  s.call('POST', '/v1/transactions/initialize', { body, headers: { 'x-idempotency-key': key }, key: apiKey });

describe('idempotency keys under concurrency, over real HTTP', () => {
  it('50 concurrent initializations with one key make one transaction; every answer is the same 200', async () => {
    const body = validInput({ merchantReference: 'race-50' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => initialize('race-key-50', body)));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    // Byte-for-byte the same body: reference, checkoutUrl, status and expiresAt.
    expect(new Set(answers.map((a) => JSON.stringify(a.json))).size).toBe(1);
    expect(answers[0]!.json).toEqual({
      reference: expect.stringMatching(/^P[0-9A-F]{8}\d{8}$/),
      checkoutUrl: expect.any(String),
      status: 'success',
      expiresAt: expect.any(String),
    });
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    expect(s.service.transactions().filter((t) => t.merchantReference === 'race-50')).toHaveLength(1);
  });

  it('the same fields in another key order are the same body: replayed, not a conflict', async () => {
    const body = validInput({ merchantReference: 'order-keys' });
    const first = await initialize('key-order', body);
    const reversed = Object.fromEntries(Object.entries(body).reverse());
    const again = await initialize('key-order', reversed);
    expect([again.status, again.json.reference]).toEqual([200, first.json.reference]);
  });

  it('one key with a different body gets 409 and creates nothing, also when 50 race with 2 bodies', async () => {
    const a = validInput({ merchantReference: 'conflict-a' });
    const b = validInput({ merchantReference: 'conflict-b' });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => initialize('race-conflict', i % 2 ? b : a)));
    const statuses = answers.map((r) => r.status);
    // Whichever body came first owns the key: its 25 get 200, the other 25 get 409.
    expect(statuses.filter((x) => x === 200)).toHaveLength(25);
    expect(statuses.filter((x) => x === 409)).toHaveLength(25);
    const winners = answers.filter((r) => r.status === 200);
    expect(new Set(winners.map((r) => r.json.reference)).size).toBe(1);
    for (const r of answers.filter((x) => x.status === 409)) {
      expect(r.json).toEqual({ status: 'error', data: { message: expect.stringMatching(/already used with a different request body/) } });
    }
    expect(s.service.transactions().filter((t) => t.merchantReference?.startsWith('conflict-'))).toHaveLength(1);
    // An amount changed by one cent is a different body too.
    const owner = winners[0]!.json.reference;
    const ownerBody = s.service.transactions().find((t) => t.reference === owner)!.merchantReference === 'conflict-a' ? a : b;
    expect((await initialize('race-conflict', { ...ownerBody, amount: '100.01' })).status).toBe(409);
  });

  it('a key is scoped to the account and mode: another key of the account replays it, a live key makes its own', async () => {
    // OTHER_KEY is a second sandbox key of the same account: same scope, so a replay.
    const body = validInput({ merchantReference: 'scoped' });
    const first = await initialize('scoped-key', body);
    const sameMerchant = await initialize('scoped-key', body, OTHER_KEY);
    expect(sameMerchant.status, JSON.stringify(sameMerchant.json)).toBe(200);
    expect(sameMerchant.json.reference).toBe(first.json.reference);
    const live = await initialize('scoped-key', body, 'sk_live_shop_live_key_0003');
    expect(live.status).toBe(200);
    expect(live.json.reference).not.toBe(first.json.reference);
  });
});
