// `serve --config` with a platform's three merchant accounts, through the real CLI over real HTTP:
// each account's key sees only its own transactions, and each delivery goes to the transaction's
// own callbackUrl (else the merchant's) signed with that merchant's secret alone.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { finish as finishBuilt, killLeftovers, run as runBuilt, SOURCE, stop, urlOf } from './cli-helpers.js';
import { platformHooks, verifiedBy, type PlatformHooks } from '../platform-hooks.js';

// The CLI's source, in a child process as a user runs the bin: cli.test.ts builds dist/ meanwhile.
const run = (args: string[]) => runBuilt(args, {}, SOURCE);
const finish = (args: string[]) => finishBuilt(args, {}, SOURCE);
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  killLeftovers();
  while (cleanup.length) await cleanup.pop()!();
});

const ACCOUNTS = ['shop-a', 'shop-b', 'shop-c'].map((id, i) => ({
  id,
  key: `sk_test_platform_${id.replace('-', '_')}_000${i + 1}`,
  secret: `whsec_platform_secret_of_${id}`,
}));
const [A, B, C] = ACCOUNTS as [(typeof ACCOUNTS)[number], (typeof ACCOUNTS)[number], (typeof ACCOUNTS)[number]];
const SECRETS = Object.fromEntries(ACCOUNTS.map((a) => [a.id, a.secret]));
const order = { amount: '100.00', currencyCode: 'ETB', customerPhone: '0911234567' };

function configFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'payhook-platform-')), 'config.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

async function hooks(): Promise<PlatformHooks> {
  const h = await platformHooks();
  cleanup.push(h.close);
  return h;
}

/** Call the service with `key`: the status and the parsed body. */
async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

describe('payhook-reference serve with several merchant accounts (--config)', () => {
  it('keeps three accounts apart: own callbackUrl first, own secret only, and 404 for another account’s key', async () => {
    const h = await hooks();
    const config = configFile({
      merchants: ACCOUNTS.map((a) => ({
        id: a.id,
        name: `Shop ${a.id.slice(-1).toUpperCase()}`,
        apiKeys: [{ key: a.key }],
        webhookSecret: a.secret,
        callbackUrl: `${h.origin}/dashboard/${a.id}`,
      })),
    });
    const p = run(['serve', '--port', '0', '--allow-http-callbacks', '--config', config]);
    const url = await urlOf(p);
    // The banner names every account; keys from the file are never printed, secrets only masked.
    for (const a of ACCOUNTS) expect(p.output()).toContain(`merchant        ${a.id} (Shop ${a.id.slice(-1).toUpperCase()})`);
    expect(p.output()).toContain(`    callback URL    ${h.origin}/dashboard/shop-b`);
    for (const a of ACCOUNTS) expect(p.output()).not.toMatch(new RegExp(`${a.key}|${a.secret}`));

    // Each account pays one transaction whose callbackUrl names the account, as a platform's do.
    const refs: Record<string, string> = {};
    for (const a of ACCOUNTS) {
      const init = await call(url, a.key, 'POST', '/v1/transactions/initialize', {
        ...order,
        merchantReference: `order-${a.id}`,
        callbackUrl: `${h.origin}/webhooks/epay/${a.id}`,
      });
      expect(init.status).toBe(200);
      refs[a.id] = init.json.reference;
      expect((await call(url, a.key, 'POST', `/_sandbox/transactions/${refs[a.id]}/pay`)).status).toBe(200);
      const hook = await h.next(`/webhooks/epay/${a.id}`);
      expect(JSON.parse(hook.body.toString())).toMatchObject({ event: 'payment.success', reference: refs[a.id] });
      expect(verifiedBy(hook, SECRETS)).toEqual([a.id]);
      await p.printed(new RegExp(`Z ${a.id} payment\\.success ${refs[a.id]} dlv_\\d+ attempt 1/5 → 200`));
    }
    expect(h.hooks.map((x) => x.path).sort()).toEqual(ACCOUNTS.map((a) => `/webhooks/epay/${a.id}`));

    // B's key cannot see, verify, cancel, read the timeline of, or move A's transaction (interface §7: 404).
    const a = refs[A.id]!;
    for (const [method, path] of [
      ['GET', `/v1/transactions/${a}`],
      ['GET', `/v1/transactions/${a}/verify`],
      ['POST', `/v1/transactions/${a}/cancel`],
      ['GET', `/v1/transactions/${a}/timeline`],
      ['POST', `/_sandbox/transactions/${a}/refund`],
    ] as const) {
      const res = await call(url, B.key, method, path);
      expect({ path, status: res.status, body: res.json }).toMatchObject({
        path,
        status: 404,
        body: { status: 'error', data: { message: expect.stringMatching(/under this account/) } },
      });
    }
    const listed = await call(url, B.key, 'GET', '/v1/transactions');
    expect(listed.json.data.map((t: { reference: string }) => t.reference)).toEqual([refs[B.id]]);
    const bDeliveries = await call(url, B.key, 'GET', '/_sandbox/deliveries');
    expect(bDeliveries.json.map((d: { reference: string }) => d.reference)).toEqual([refs[B.id]]);
    // A's own key still sees it, untouched.
    expect((await call(url, A.key, 'GET', `/v1/transactions/${a}/verify`)).json).toMatchObject({ reference: a, status: 'completed' });

    // Without a callbackUrl of its own, C's transaction goes to C's callback URL, signed with C's secret.
    const plain = await call(url, C.key, 'POST', '/v1/transactions/initialize', { ...order, merchantReference: 'order-plain' });
    expect((await call(url, C.key, 'POST', `/v1/transactions/${plain.json.reference}/cancel`)).status).toBeLessThan(300);
    const cancelled = await h.next('/dashboard/shop-c');
    expect(JSON.parse(cancelled.body.toString())).toMatchObject({ event: 'payment.cancelled', reference: plain.json.reference });
    expect(verifiedBy(cancelled, SECRETS)).toEqual([C.id]);
    expect(h.hooks.filter((x) => x.path.startsWith('/dashboard/')).map((x) => x.path)).toEqual(['/dashboard/shop-c']);
    await stop(p);
  }, 60_000);

  it('generates and prints a key and a secret for each account that has none, under its id', async () => {
    const h = await hooks();
    const config = configFile({ merchants: [{ id: 'shop-a' }, { id: 'shop-b' }, { name: 'No id' }] });
    const p = run(['serve', '--port', '0', '--allow-http-callbacks', '--config', config]);
    const url = await urlOf(p);
    const printed = [...p.output().matchAll(/merchant {8}(\S+).*\n {4}sandbox key {5}(sk_test_\S+)\n {4}webhook secret {2}(whsec_\S+)/g)];
    expect(printed.map((m) => m[1])).toEqual(['shop-a', 'shop-b', 'merchant_3']);
    expect(p.output()).toContain('merchant        merchant_3 (No id)');
    const [, , bKey, bSecret] = printed[1]!;
    const [, , aKey, aSecret] = printed[0]!;
    expect(new Set(printed.flatMap((m) => [m[2], m[3]])).size).toBe(6);

    const init = await call(url, bKey!, 'POST', '/v1/transactions/initialize', {
      ...order,
      merchantReference: 'order-generated',
      callbackUrl: `${h.origin}/webhooks/epay/shop-b`,
    });
    expect((await call(url, aKey!, 'GET', `/v1/transactions/${init.json.reference}`)).status).toBe(404);
    expect((await call(url, bKey!, 'POST', `/_sandbox/transactions/${init.json.reference}/pay`)).status).toBe(200);
    const hook = await h.next('/webhooks/epay/shop-b');
    expect(verifiedBy(hook, { 'shop-a': aSecret!, 'shop-b': bSecret! })).toEqual(['shop-b']);
    await stop(p);
  }, 60_000);

  it('refuses a config whose merchants are not objects, or share an id, saying which', async () => {
    const bad = await finish(['serve', '--port', '0', '--config', configFile({ merchants: [{ id: 'a' }, 'b'] })]);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/^\[@payhook\/reference\] .*config\.json: merchants\[1\] must be an object such as \{ "id": "shop-a" \}/);
    const twice = await finish(['serve', '--port', '0', '--config', configFile({ merchants: [{ id: 'a' }, { id: 'a' }] })]);
    expect(twice.code).toBe(2);
    expect(twice.output).toMatch(/two merchants share the id "a"; give each its own id/);
  }, 30_000);
});
