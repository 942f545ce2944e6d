import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceService } from '@payhook/reference';
import { createApp } from '../src/app.js';
import { createPlatform, type Platform } from '../src/platform.js';

/**
 * The platform example over real HTTP against the reference service: three merchant accounts, each
 * with its own API key and webhook secret, paid through the service, which calls each
 * transaction's own callbackUrl; one account's secret rotated while deliveries flow.
 */
const ACCOUNTS = ['shop_a', 'shop_b', 'shop_c'].map((id) => ({
  id,
  apiKey: `sk_test_platform_${id}_key`,
  webhookSecret: `whsec_platform_${id}_secret`,
  staffPassword: `pw-${id}`,
}));
const STAFF_PASSWORD = 'platform-staff-pw';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('examples/platform: three merchant accounts on one endpoint, against the reference service', () => {
  const service = createReferenceService({
    clock: 'manual',
    allowHttpCallbacks: true,
    merchants: ACCOUNTS.map((a) => ({ id: a.id, apiKeys: [{ key: a.apiKey }], webhookSecret: a.webhookSecret })),
  });
  let ref: { url: string; close: () => Promise<void> };
  let platform: Platform;
  let server: http.Server;
  let url = '';
  const lines: { level: string; fields: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    ref = await service.listen({ port: 0, host: '127.0.0.1' });
    let app: http.RequestListener | undefined;
    server = http.createServer((req, res) => app!(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    platform = createPlatform(
      {
        PAYHOOK_BASE_URL: ref.url,
        PLATFORM_PUBLIC_URL: url,
        PLATFORM_DB: join(mkdtempSync(join(tmpdir(), 'payhook-platform-')), 'platform.db'),
        PLATFORM_ACCOUNTS: JSON.stringify(ACCOUNTS),
        PLATFORM_STAFF_PASSWORD: STAFF_PASSWORD,
      },
      { logger: (level, fields) => void lines.push({ level, fields: fields as Record<string, unknown> }) },
    );
    app = createApp(platform) as unknown as http.RequestListener;
  });
  afterAll(async () => {
    await platform?.receiver.idle();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    platform?.close();
    await ref?.close();
  });

  const keyOf = (account: string) => ACCOUNTS.find((a) => a.id === account)!.apiKey;
  /** The reference service, as the account's key. */
  const service$ = async (account: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(ref.url + path, {
      method,
      headers: { authorization: `Bearer ${keyOf(account)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const checkout = async (account: string, merchantReference: string) => {
    const res = await fetch(`${url}/accounts/${account}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '120.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { reference: string }).reference;
  };
  const pay = async (account: string, reference: string) => {
    expect((await service$(account, 'POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
    await service.clock.advance(0);
  };
  const order = async (account: string, merchantReference: string) =>
    (await fetch(`${url}/accounts/${account}/orders/${merchantReference}`)).json() as Promise<Record<string, unknown>>;

  it("pays each account's orders: each transaction's callbackUrl names its account, verified with that account's secret, run once", async () => {
    for (const { id } of ACCOUNTS) {
      for (const n of [1, 2]) {
        const reference = await checkout(id, `order-${n}`);
        await pay(id, reference);
        expect(await order(id, `order-${n}`)).toEqual({
          account: id,
          merchantReference: `order-${n}`,
          reference,
          status: 'completed',
          events: ['payment.success'],
        });
      }
    }
    // Every delivery went to its own account's URL, and the service saw 200.
    const { json } = await service$('shop_c', 'GET', '/_sandbox/deliveries');
    const deliveries = json as unknown as { url: string; attempts: { status: number }[] }[];
    expect(deliveries.map((d) => [d.url, d.attempts.at(-1)?.status])).toEqual([
      [`${url}/webhooks/epay/shop_c`, 200],
      [`${url}/webhooks/epay/shop_c`, 200],
    ]);
    await platform.receiver.idle();
    expect((await platform.receiver.store.ledger!.list({ account: 'shop_b' })).map((e) => e.outcome)).toEqual(['processed', 'processed']);
  });

  it("mounts the board scoped per account: a merchant's staff see their own payments, the platform's staff every account's", async () => {
    await platform.receiver.idle();
    const page = async (authorization: string, path = '/admin/payments') => {
      const res = await fetch(url + path, { headers: { authorization } });
      return [res.status, await res.text()] as const;
    };
    const references = async (account: string) =>
      ((await platform.receiver.store.ledger!.list({ account })) as { reference?: string }[]).map((e) => e.reference!);
    const [a, b] = [await references('shop_a'), await references('shop_b')];
    const [status, asA] = await page(basic('shop_a', 'pw-shop_a'));
    expect(status).toBe(200);
    for (const ref of a) expect(asA).toContain(ref);
    for (const ref of b) expect(asA).not.toContain(ref);
    const [, asStaff] = await page(basic('platform', STAFF_PASSWORD));
    for (const ref of [...a, ...b]) expect(asStaff).toContain(ref);
    // One of B's deliveries, by id, to A's staff: the page of a delivery that does not exist.
    const [bEntry] = await platform.receiver.store.ledger!.list({ account: 'shop_b' });
    const [aEntry] = await platform.receiver.store.ledger!.list({ account: 'shop_a' });
    expect((await page(basic('shop_a', 'pw-shop_a'), `/admin/payments/deliveries/${aEntry!.id}`))[0]).toBe(200);
    expect((await page(basic('shop_a', 'pw-shop_a'), `/admin/payments/deliveries/${bEntry!.id}`))[0]).toBe(404);
    expect((await page(basic('shop_b', 'pw-shop_b'), `/admin/payments/deliveries/${bEntry!.id}`))[0]).toBe(200);
    expect((await page(basic('shop_a', 'pw-shop_b')))[0]).toBe(401);
  });

  it("recovers a lost delivery of one account with that account's key; another account's reconcile never sees it", async () => {
    const reference = await checkout('shop_c', 'lost-1');
    expect((await service$('shop_c', 'POST', '/_sandbox/faults', { type: 'drop', reference })).status).toBe(201);
    await pay('shop_c', reference);
    expect(await order('shop_c', 'lost-1')).toMatchObject({ status: 'pending', events: [] });
    const range = { from: new Date(service.clock.now() - 3_600_000), to: new Date(service.clock.now() + 60_000) };
    const other = await platform.reconcile('shop_a', range);
    expect(other.recovered.map((r) => r.reference)).not.toContain(reference);
    const run = await platform.reconcile('shop_c', range);
    expect(run.recovered.map((r) => [r.account, r.reference, r.event])).toEqual([['shop_c', reference, 'payment.success']]);
    expect(await order('shop_c', 'lost-1')).toEqual({
      account: 'shop_c',
      merchantReference: 'lost-1',
      reference,
      status: 'completed',
      events: ['payment.success'],
    });
    // A second run finds it done: nothing runs twice.
    expect((await platform.reconcile('shop_c', range)).recovered).toEqual([]);
  });

  it("refuses account A's signed delivery posted to B's URL, and takes it at A's as a duplicate", async () => {
    const [delivery] = (await service$('shop_a', 'GET', '/_sandbox/deliveries')).json as unknown as { body: string; signature: string }[];
    const post = (account: string) =>
      fetch(`${url}/webhooks/epay/${account}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': delivery!.signature },
        body: delivery!.body,
      }).then(async (r) => [r.status, await r.text()]);
    expect(await post('shop_b')).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(await post('shop_nobody')).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(await post('shop_a')).toEqual([200, '{"outcome":"duplicate"}']);
  });

  it("rotates shop_b's secret while its deliveries flow: a delivery signed before the platform knew the new secret is retried and runs once", async () => {
    const staff = { authorization: basic('platform', STAFF_PASSWORD), 'content-type': 'application/json' };
    const [r1, r2, r3] = [await checkout('shop_b', 'rot-1'), await checkout('shop_b', 'rot-2'), await checkout('shop_b', 'rot-3')];
    await pay('shop_b', r1);
    // The merchant rolls its secret in the service's dashboard; the service signs with it at once.
    const rolled = (await service$('shop_b', 'POST', '/_sandbox/webhook-secret/roll')).json.webhookSecret as string;
    await pay('shop_b', r2);
    expect(await order('shop_b', 'rot-2')).toMatchObject({ status: 'pending', events: [] });
    // The merchant gives the platform the new secret: both verify from now on.
    const rotated = await fetch(`${url}/admin/accounts/shop_b/rotate`, {
      method: 'POST',
      headers: staff,
      body: JSON.stringify({ webhookSecret: rolled }),
    });
    expect([rotated.status, await rotated.json()]).toEqual([200, { account: 'shop_b', secrets: 2 }]);
    await pay('shop_b', r3);
    // The service's retry of rot-2, a minute later, now verifies.
    await service.clock.advance(61_000);
    for (const [merchantReference, reference] of [
      ['rot-1', r1],
      ['rot-2', r2],
      ['rot-3', r3],
    ] as const) {
      expect(await order('shop_b', merchantReference)).toEqual({
        account: 'shop_b',
        merchantReference,
        reference,
        status: 'completed',
        events: ['payment.success'],
      });
    }
    // Once the old secret's deliveries are done, only the new one verifies.
    const finished = await fetch(`${url}/admin/accounts/shop_b/rotate/finish`, { method: 'POST', headers: staff });
    expect(await finished.json()).toEqual({ account: 'shop_b', secrets: 1 });
    const [old] = (await service$('shop_b', 'GET', `/_sandbox/deliveries?reference=${r1}`)).json as unknown as {
      body: string;
      signature: string;
    }[];
    const replayed = await fetch(`${url}/webhooks/epay/shop_b`, {
      method: 'POST',
      headers: { 'x-service-signature': old!.signature },
      body: old!.body,
    });
    expect(replayed.status).toBe(401);
    // The other accounts go on as before.
    expect(await order('shop_a', 'order-1')).toMatchObject({ status: 'completed', events: ['payment.success'] });
    // Nobody but the platform's staff rotates.
    const stranger = await fetch(`${url}/admin/accounts/shop_b/rotate`, {
      method: 'POST',
      headers: { authorization: basic('shop_b', 'pw-shop_b'), 'content-type': 'application/json' },
      body: JSON.stringify({ webhookSecret: 'whsec_attacker_chosen' }),
    });
    expect(stranger.status).toBe(401);
  });
});
