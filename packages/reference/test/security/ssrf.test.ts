import type { LookupAddress } from 'node:dns';
import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { callbackUrlProblem, classifyAddress, resolveCallbackTarget } from '../../src/delivery/callback-url.js';
import { createClock } from '../../src/domain/clock.js';
import { createDispatcher, type Delivery } from '../../src/delivery/dispatcher.js';
import { createFaults } from '../../src/delivery/faults.js';
import type { Merchant } from '../../src/domain/merchants.js';
import { createTransactionStore } from '../../src/domain/transactions.js';
import { merchants, receiver, SECRET, start, validInput, type Receiver } from '@payhook/test-support/apps/reference-service';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** Callback URLs that point into the service's own machine or network, however they are spelled. */
const LOOPBACK_URLS = [
  'https://127.0.0.1/webhooks',
  'https://127.1.2.3:8443/webhooks',
  'https://localhost/webhooks',
  'https://LOCALHOST./webhooks',
  'https://hooks.localhost/webhooks',
  'https://[::1]/webhooks',
  'https://[::ffff:127.0.0.1]/webhooks', // IPv4-mapped
  'https://[::ffff:7f00:1]/webhooks', // IPv4-mapped, hex form
  'https://[::127.0.0.1]/webhooks', // IPv4-compatible
  'https://2130706433/webhooks', // decimal
  'https://0177.0.0.1/webhooks', // octal
  'https://0x7f.0.0.1/webhooks', // hex
  'https://127.1/webhooks', // short form
];
const INTERNAL_URLS = [
  'https://10.0.0.1/webhooks',
  'https://10.255.255.254/webhooks',
  'https://172.16.0.1/webhooks',
  'https://172.31.255.255/webhooks',
  'https://192.168.1.1/webhooks',
  'https://169.254.169.254/latest/meta-data/', // cloud metadata
  'https://169.254.0.1/webhooks', // link-local
  'https://0xa9fea9fe/latest/meta-data/', // 169.254.169.254 in hex
  'https://2852039166/latest/meta-data/', // 169.254.169.254 in decimal
  'https://100.64.0.1/webhooks', // CGNAT
  'https://100.127.255.254/webhooks',
  'https://[fc00::1]/webhooks', // unique local
  'https://[fd12:3456:789a::1]/webhooks',
  'https://[fe80::1]/webhooks', // IPv6 link-local
  'https://[::ffff:169.254.169.254]/latest/meta-data/',
  'https://[::ffff:10.0.0.1]/webhooks',
  'https://[0:0:0:0:0:ffff:c0a8:101]/webhooks', // 192.168.1.1
  'https://[64:ff9b::a9fe:a9fe]/webhooks', // NAT64 of 169.254.169.254
  'https://0.0.0.0/webhooks',
  'https://0/webhooks',
  'https://[::]/webhooks',
  'https://224.0.0.1/webhooks',
  'https://255.255.255.255/webhooks',
];
const OTHER_SCHEMES = ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_FLUSHALL', 'ftp://10.0.0.1/x', 'http://127.0.0.1:9/webhooks'];

describe('callback URLs into private networks are refused at initialize', () => {
  it(`${LOOPBACK_URLS.length + INTERNAL_URLS.length + OTHER_SCHEMES.length} URLs get 400 and make no transaction, without the dev flag`, async () => {
    const s = await start();
    cleanup.push(s.close);
    for (const callbackUrl of [...LOOPBACK_URLS, ...INTERNAL_URLS, ...OTHER_SCHEMES]) {
      const res = await s.call('POST', '/v1/transactions/initialize', {
        body: validInput({ callbackUrl, merchantReference: callbackUrl.slice(0, 90) }),
      });
      expect({ callbackUrl, status: res.status }).toEqual({ callbackUrl, status: 400 });
      expect(res.json.data.message).toMatch(/callbackUrl/);
    }
    expect(s.service.transactions()).toHaveLength(0);
    // A public name passes the static check (it is resolved and checked again when sent).
    const ok = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ callbackUrl: 'https://shop.example/webhooks' }) });
    expect(ok.status).toBe(200);
  });

  it('with --allow-http-callbacks loopback passes, and every other internal address is still refused', async () => {
    const s = await start({ allowHttpCallbacks: true });
    cleanup.push(s.close);
    for (const callbackUrl of LOOPBACK_URLS) expect(callbackUrlProblem(callbackUrl, true), callbackUrl).toBeNull();
    for (const callbackUrl of INTERNAL_URLS) {
      const res = await s.call('POST', '/v1/transactions/initialize', { body: validInput({ callbackUrl }) });
      expect({ callbackUrl, status: res.status }).toEqual({ callbackUrl, status: 400 });
      expect(res.json.data.message).toMatch(/private network/);
    }
  });

  it('a merchant whose global callback URL is internal cannot even be configured', () => {
    for (const url of ['https://169.254.169.254/', 'https://[fd00::1]/', 'https://2130706433/']) {
      expect(() => createReferenceService({ merchants: merchants(url) }), url).toThrow(/callbackUrl/);
    }
  });

  it('classifies addresses, unwrapping IPv4-mapped and IPv4-compatible IPv6', () => {
    expect(
      [
        '127.0.0.1',
        '::1',
        '::ffff:7f00:1',
        '0:0:0:0:0:ffff:127.0.0.1',
        '10.1.1.1',
        'fd00::1',
        '::ffff:a9fe:a9fe',
        '100.64.0.0',
        '8.8.8.8',
        '2001:4860:4860::8888',
        '100.128.0.1',
        '172.32.0.1',
      ].map(classifyAddress),
    ).toEqual(['loopback', 'loopback', 'loopback', 'loopback', 'internal', 'internal', 'internal', 'internal', null, null, null, null]);
  });
});

/** The dispatcher alone, with an injected resolver: `names` maps host names to what they resolve to. */
function dispatcherWith(names: Record<string, string[] | (() => string[])>, allowHttpCallbacks: boolean) {
  const lookups: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    lookups.push(hostname);
    const entry = names[hostname];
    const list = typeof entry === 'function' ? entry() : entry;
    if (!list) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const clock = createClock({ mode: 'manual' });
  const dispatcher = createDispatcher({ clock, faults: createFaults(), allowHttpCallbacks, lookup });
  const transactions = createTransactionStore();
  const merchant: Merchant = {
    id: 'shop',
    name: 'shop',
    webhookSecret: SECRET,
    callbackUrl: undefined,
    paymentSourceActive: true,
    providers: new Set(),
    allows: () => true,
  };
  const deliver = async (callbackUrl: string): Promise<Delivery> => {
    const tx = transactions.create(
      {
        merchantId: 'shop',
        mode: 'sandbox',
        merchantReference: 'order-ssrf',
        amount: '10.00',
        serviceFee: '0.35',
        currency: 'ETB',
        customer: { name: '', email: '', phone: '251911234567' },
        callbackUrl,
        createdAt: clock.now(),
      },
      (ref) => `https://pay.example/checkout/${ref}`,
    );
    Object.assign(tx, { status: 'completed', paymentMethod: 'telebirr', paidAt: clock.now() });
    const [d] = dispatcher.send(merchant, tx, 'payment.success');
    await clock.advance(0);
    return d!;
  };
  cleanup.push(() => clock.close());
  return { deliver, lookups, clock };
}

async function listening(): Promise<Receiver> {
  const r = await receiver();
  cleanup.push(r.close);
  return r;
}

describe('the dispatcher checks the resolved address where it connects', () => {
  it('a name that resolves to a private or loopback address is refused at send time, and nothing is sent', async () => {
    const r = await listening();
    const port = new URL(r.url).port;
    const { deliver } = dispatcherWith(
      {
        'hooks.shop.test': ['127.0.0.1'],
        'metadata.shop.test': ['169.254.169.254'],
        'mixed.shop.test': ['93.184.216.34', '10.0.0.7'], // one public, one private: refused
        'v6.shop.test': ['fd00::7'],
        'mapped.shop.test': ['::ffff:127.0.0.1'],
      },
      false,
    );
    for (const host of ['hooks.shop.test', 'metadata.shop.test', 'mixed.shop.test', 'v6.shop.test', 'mapped.shop.test']) {
      const d = await deliver(`https://${host}:${port}/webhooks`);
      expect(d.attempts[0], host).toMatchObject({
        status: null,
        error: expect.stringMatching(new RegExp(`^refused: ${host.replace(/\./g, '\\.')} resolves to`)),
      });
    }
    expect(r.requests).toHaveLength(0);
  });

  it('checks again at every attempt: a name re-pointed at a private address after the first attempt is refused on the retry', async () => {
    const r = await listening();
    let answer = ['127.0.0.1'];
    const { deliver, clock } = dispatcherWith({ 'shop.localhost': () => answer }, true);
    const d = await deliver(`http://shop.localhost:${new URL(r.url).port}/webhooks`);
    expect(d.state).toBe('delivered');
    expect(r.requests).toHaveLength(1);
    // The next transaction's first attempt fails (no receiver), and the name moves to the metadata address.
    await r.close();
    const second = await deliver(`http://shop.localhost:${new URL(r.url).port}/webhooks`);
    expect(second.attempts[0]!.error).toMatch(/connection error/);
    answer = ['169.254.169.254'];
    await clock.advance(60_000);
    expect(second.attempts[1]).toMatchObject({
      status: null,
      error: expect.stringMatching(/^refused: shop\.localhost resolves to 169\.254\.169\.254/),
    });
  });

  it('connects to the address it checked: one resolution per attempt, never a second one by the socket (DNS rebinding)', async () => {
    const r = await listening();
    let calls = 0;
    // First answer loopback (allowed with the flag), every later answer the metadata service.
    const { deliver, lookups } = dispatcherWith({ 'rebind.localhost': () => (++calls === 1 ? ['127.0.0.1'] : ['169.254.169.254']) }, true);
    const d = await deliver(`http://rebind.localhost:${new URL(r.url).port}/webhooks`);
    expect(d.state).toBe('delivered');
    expect(lookups).toEqual(['rebind.localhost']);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]!.headers.host).toBe(`rebind.localhost:${new URL(r.url).port}`);
  });

  it("a name that does not resolve fails the attempt with the resolver's code", async () => {
    const { deliver } = dispatcherWith({}, false);
    const d = await deliver('https://nowhere.shop.test/webhooks');
    expect(d.attempts[0]!.error).toMatch(/cannot resolve nowhere\.shop\.test: ENOTFOUND/);
  });

  it('resolveCallbackTarget uses the system resolver for localhost, and refuses it without the flag', async () => {
    await expect(resolveCallbackTarget('https://localhost:9/x', { allowLoopback: false })).resolves.toMatchObject({ ok: false });
    await expect(resolveCallbackTarget('http://localhost:9/x', { allowLoopback: true })).resolves.toMatchObject({
      ok: true,
      address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
    });
  });

  it('does not follow a redirect to the metadata address or to another local server', async () => {
    const internal = await listening();
    for (const location of ['http://169.254.169.254/latest/meta-data/', internal.url]) {
      const redirecting = await receiver((_n, _req, res) => void res.writeHead(302, { location }).end());
      cleanup.push(redirecting.close);
      const s = await start({ allowHttpCallbacks: true, merchants: merchants(redirecting.url) });
      cleanup.push(s.close);
      const init = await s.call('POST', '/v1/transactions/initialize', { body: validInput() });
      await s.call('POST', `/_sandbox/transactions/${init.json.reference}/pay`);
      await s.service.clock.advance(0);
      const [d] = s.service.deliveries();
      expect(d!.attempts[0]).toMatchObject({ status: 302, error: 'redirect 302 not followed' });
      expect(redirecting.requests).toHaveLength(1);
    }
    expect(internal.requests).toHaveLength(0);
  });
});
