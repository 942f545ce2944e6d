// Three merchant accounts in one service (a platform's), in process on a virtual clock and over
// real HTTP on port 0: retries keep each delivery's own URL and signature, and one account's
// sandbox faults and deliveries are its own.
import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { start, validInput, type Started } from '@payhook/test-support/apps/reference-service';
import { platformHooks, verifiedBy, type PlatformHooks } from './platform-hooks.js';

const MINUTE = 60_000;
const ACCOUNTS = ['shop-a', 'shop-b', 'shop-c'].map((id, i) => ({
  id,
  key: `sk_test_accounts_${id.replace('-', '_')}_000${i + 1}`,
  secret: `whsec_accounts_secret_of_${id}`,
}));
const [A, B, C] = ACCOUNTS as [(typeof ACCOUNTS)[number], (typeof ACCOUNTS)[number], (typeof ACCOUNTS)[number]];
const SECRETS = Object.fromEntries(ACCOUNTS.map((a) => [a.id, a.secret]));

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** The three accounts on a manual clock, each with a callback URL of its own on `h`. */
async function platform(h: PlatformHooks): Promise<Started> {
  const s = await start({
    allowHttpCallbacks: true,
    merchants: ACCOUNTS.map((a) => ({
      id: a.id,
      apiKeys: [{ key: a.key }],
      webhookSecret: a.secret,
      callbackUrl: `${h.origin}/dashboard/${a.id}`,
    })),
  });
  cleanup.push(s.close);
  return s;
}

async function hooks(answer?: Parameters<typeof platformHooks>[0]): Promise<PlatformHooks> {
  const h = await platformHooks(answer);
  cleanup.push(h.close);
  return h;
}

describe('a service with several merchant accounts', () => {
  it('retries an account’s delivery on the virtual clock to the same per-transaction URL, signed with its own secret', async () => {
    // A's endpoint fails twice; B's and C's answer at once.
    let toShopA = 0;
    const h = await hooks((hook) => (hook.path.endsWith('/shop-a') && ++toShopA <= 2 ? 500 : 200));
    const s = await platform(h);
    const refs: Record<string, string> = {};
    for (const a of ACCOUNTS) {
      refs[a.id] = await s.initialize({ merchantReference: `order-${a.id}`, callbackUrl: `${h.origin}/webhooks/epay/${a.id}` }, a.key);
    }
    for (const a of ACCOUNTS) {
      expect((await s.call('POST', `/_sandbox/transactions/${refs[a.id]}/pay`, { key: a.key })).status).toBe(200);
    }
    await s.service.clock.advance(0);
    expect(s.service.deliveries({ merchantId: A.id })[0]).toMatchObject({ state: 'retrying', attempts: [{ status: 500 }] });
    await s.service.clock.advance(3 * MINUTE); // attempts 2 (at 1 minute) and 3 (at 3 minutes)

    const toA = h.hooks.filter((x) => x.path === '/webhooks/epay/shop-a');
    expect(toA).toHaveLength(3);
    expect(new Set(toA.map((x) => x.body.toString())).size).toBe(1);
    for (const hook of h.hooks) expect(verifiedBy(hook, SECRETS)).toEqual([hook.path.split('/').pop()]);
    expect(h.hooks.map((x) => x.path).filter((p) => !p.endsWith('/shop-a'))).toEqual(['/webhooks/epay/shop-b', '/webhooks/epay/shop-c']);
    expect(s.service.deliveries({ merchantId: A.id })[0]!.attempts.map((x) => x.status)).toEqual([500, 500, 200]);
    expect(s.service.deliveries().map((d) => [d.merchantId, d.reference, d.url])).toEqual(
      ACCOUNTS.map((a) => [a.id, refs[a.id], `${h.origin}/webhooks/epay/${a.id}`]),
    );
  });

  it('one account’s faults, deliveries and transactions are its own; another’s key gets 404', async () => {
    const h = await hooks();
    const s = await platform(h);
    // B asks for every delivery of its sandbox to be dropped: A's is still sent.
    expect((await s.call('POST', '/_sandbox/faults', { key: B.key, body: { type: 'drop', count: 5 } })).status).toBe(201);
    expect((await s.call('GET', '/_sandbox/faults', { key: A.key })).json).toEqual([]);
    const a = await s.initialize({ merchantReference: 'order-a' }, A.key);
    const b = await s.initialize({ merchantReference: 'order-b' }, B.key);
    await s.call('POST', `/_sandbox/transactions/${a}/pay`, { key: A.key });
    await s.call('POST', `/_sandbox/transactions/${b}/pay`, { key: B.key });
    await s.service.clock.advance(0);
    // Neither gave a callbackUrl: each goes to its merchant's own.
    expect(h.hooks.map((x) => [x.path, verifiedBy(x, SECRETS)])).toEqual([['/dashboard/shop-a', ['shop-a']]]);
    expect(s.service.deliveries({ merchantId: B.id })).toMatchObject([{ reference: b, state: 'dropped' }]);

    for (const [key, own, other] of [
      [A.key, a, b],
      [C.key, undefined, a],
    ] as const) {
      const listed = await s.call('GET', '/v1/transactions', { key });
      expect(listed.json.data.map((t: { reference: string }) => t.reference)).toEqual(own ? [own] : []);
      expect((await s.call('GET', `/v1/transactions/${other}`, { key })).status).toBe(404);
      expect((await s.call('GET', `/_sandbox/deliveries?reference=${other}`, { key })).json).toEqual([]);
      const deliveryOfOther = s.service.deliveries({ reference: other })[0]!.id;
      expect((await s.call('POST', `/_sandbox/deliveries/${deliveryOfOther}/resend`, { key })).status).toBe(404);
    }
    // An idempotency key is the account's own: the same key from B makes B a new transaction.
    const same = { headers: { 'x-idempotency-key': 'checkout-1' }, body: validInput({ merchantReference: 'same' }) };
    const fromA = await s.call('POST', '/v1/transactions/initialize', { key: A.key, ...same });
    const fromB = await s.call('POST', '/v1/transactions/initialize', { key: B.key, ...same });
    expect(fromB.json.reference).not.toBe(fromA.json.reference);
  });

  it('refuses one API key given to two merchants: it would act for only one of them', () => {
    const key = { key: 'sk_test_one_key_for_two_shops' };
    expect(() =>
      createReferenceService({
        merchants: [
          { id: 'shop-a', apiKeys: [key], webhookSecret: A.secret },
          { id: 'shop-b', apiKeys: [key], webhookSecret: B.secret },
        ],
      }),
    ).toThrow(/^\[@payhook\/reference\] merchants shop-a and shop-b share an API key; give each merchant keys of its own/);
  });
});
