import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { merchants, receiver, SANDBOX_KEY, start, type Started } from '@payhook/test-support/apps/reference-service';

// Issue 31: the dashboard and the checkout answer only to the host names the server was started
// for (DNS rebinding), and take forms from themselves only (CSRF). Real HTTP with forged headers;
// browser.test.ts shows the same in Chromium.
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

interface Answer {
  status: number;
  type: string | undefined;
  text: string;
}

/** A raw request, so Host, Origin, Referer and Sec-Fetch-Site can be anything (fetch forbids setting Host). */
function send(s: Started, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const body = method === 'POST' ? 'paymentMethod=telebirr&otp=123456' : undefined;
    const req = httpRequest(
      {
        host: hostname,
        port,
        method,
        path,
        headers: { ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A service with a paid transaction (one delivery made) and one open at checkout (processing). */
async function scene(options: Parameters<typeof start>[0] = {}) {
  const hook = await receiver();
  cleanup.push(hook.close);
  const s = await start({ allowHttpCallbacks: true, merchants: merchants(hook.url), ...options });
  cleanup.push(s.close);
  const port = new URL(s.url).port;
  const paid = await s.initialize({ merchantReference: 'paid', customerPhone: '0911111111' });
  expect((await s.call('POST', `/_sandbox/transactions/${paid}/pay`)).status).toBe(200);
  await s.service.clock.advance(0);
  const open = await s.initialize({ merchantReference: 'open', customerPhone: '0922222222' });
  expect((await send(s, 'GET', `/checkout/${open}`)).status).toBe(200);
  const pending = await s.initialize({ merchantReference: 'pending', customerPhone: '0933333333' });
  const delivery = s.service.deliveries({ reference: paid })[0]!.id;
  const posts = [
    `/_dashboard/transactions/${paid}/refund`,
    `/_dashboard/transactions/${paid}/reverse`,
    `/_dashboard/transactions/${open}/fail`,
    `/_dashboard/transactions/${open}/cancel`,
    `/_dashboard/deliveries/${delivery}/resend`,
    `/checkout/${open}/pay`,
    `/checkout/${open}/fail`,
    `/checkout/${open}/cancel`,
  ];
  const gets = ['/_dashboard', `/_dashboard/transactions/${paid}`, `/checkout/${open}`, `/checkout/${pending}`];
  /** Everything the pages could change, and every webhook received. */
  const state = async () => {
    await s.service.clock.advance(0);
    return JSON.stringify([s.service.transactions(), s.service.deliveries(), hook.requests.length]);
  };
  return { s, hook, port, paid, open, pending, posts, gets, state };
}

const refused = (a: Answer) =>
  expect([a.status, a.type, a.text]).toEqual([403, 'text/html; charset=utf-8', expect.stringContaining('<h1>Refused</h1>')]);

describe('pages answer only to the host names the server was started for', () => {
  it('GET through a rebound name (127.attacker.example, …) is a 403 that shows no transaction, phone or answer, and opens nothing', async () => {
    const { s, port, paid, open, pending, gets, state } = await scene();
    const before = await state();
    const hosts = [
      `127.attacker.example:${port}`,
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `localhost.:${port}`,
      `local:${port}`,
    ];
    for (const host of hosts) {
      for (const path of gets) {
        const answer = await send(s, 'GET', path, { host });
        refused(answer);
        for (const secret of [paid, open, pending, '251911111111', '251922222222', 'processed'])
          expect(answer.text, `${host} ${path}`).not.toContain(secret);
      }
    }
    // The right names on another port are someone else's server.
    for (const host of ['localhost:1', `127.0.0.1:${Number(port) + 1}`]) refused(await send(s, 'GET', '/_dashboard', { host }));
    expect(await state()).toBe(before);
    expect(s.service.transactions().find((t) => t.reference === pending)!.status).toBe('pending');

    // The names of the listen address, and IP literals, on its port.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`]) {
      for (const path of gets) expect((await send(s, 'GET', path, { host })).status, `${host} ${path}`).toBe(200);
    }
    expect(s.service.transactions().find((t) => t.reference === pending)!.status).toBe('processing');
  });

  it('POST through a rebound name is a 403 and moves nothing: dashboard actions, Resend, checkout Pay, Fail and Cancel', async () => {
    const { s, port, posts, state } = await scene();
    const before = await state();
    for (const name of ['127.attacker.example', 'evil.example', '127.0.0.1.evil.example']) {
      // What a page on the rebound name sends: its own origin, same-origin.
      const headers = {
        host: `${name}:${port}`,
        origin: `http://${name}:${port}`,
        'sec-fetch-site': 'same-origin',
        referer: `http://${name}:${port}/`,
      };
      for (const path of posts) refused(await send(s, 'POST', path, headers));
    }
    expect(await state()).toBe(before);
  });

  it('a foreign Referer alone, Origin null, a foreign Origin or a cross-site or same-site fetch is a 403 and moves nothing', async () => {
    const { s, port, posts, state } = await scene();
    const before = await state();
    const forged: Record<string, string>[] = [
      { referer: 'https://evil.example/shop' },
      { referer: `http://evil.example:${port}/_dashboard` },
      { referer: 'not a url' },
      { origin: 'null' },
      { origin: 'https://evil.example' },
      { origin: `http://localhost:${port}` },
      { origin: `http://127.0.0.1:${Number(port) + 1}` },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: `http://127.0.0.1:${port}`, referer: 'https://evil.example/' },
    ];
    for (const headers of forged) for (const path of posts) refused(await send(s, 'POST', path, { host: `127.0.0.1:${port}`, ...headers }));
    expect(await state()).toBe(before);
  });

  it("the pages' own forms pass: a browser's same-origin headers, and curl's none", async () => {
    const { s, port, paid, open, state } = await scene();
    const own = `http://127.0.0.1:${port}`;
    const browser = { host: `127.0.0.1:${port}`, origin: own, 'sec-fetch-site': 'same-origin', referer: `${own}/checkout/${open}` };
    const paying = await send(s, 'POST', `/checkout/${open}/pay`, browser);
    expect([paying.status, s.service.transactions().find((t) => t.reference === open)!.status]).toEqual([303, 'completed']);
    const before = await state();
    expect(
      (await send(s, 'POST', `/_dashboard/transactions/${paid}/refund`, { host: `localhost:${port}`, 'sec-fetch-site': 'same-origin' }))
        .status,
    ).toBe(303);
    expect((await send(s, 'POST', `/_dashboard/transactions/${paid}/complete-refund`, { referer: `${own}/_dashboard` })).status).toBe(303);
    expect(s.service.transactions().find((t) => t.reference === paid)!.status).toBe('refunded');
    expect(await state()).not.toBe(before);
  });

  it('pageHosts and the host of publicUrl add names; the JSON API and sandbox control answer to any Host', async () => {
    const { s, port, open } = await scene({ pageHosts: ['pay.local', 'shop.test:8080'], publicUrl: 'https://pay.example.test/' });
    for (const host of [`pay.local:${port}`, 'pay.local:1', 'shop.test:8080', 'pay.example.test'])
      expect((await send(s, 'GET', '/_dashboard', { host })).status, host).toBe(200);
    for (const host of [`shop.test:${port}`, 'pay.example.test:8443', `evil.example:${port}`])
      refused(await send(s, 'GET', '/_dashboard', { host }));
    // Behind a TLS proxy at publicUrl, the checkout's origin is https.
    const cancelled = await send(s, 'POST', `/checkout/${open}/cancel`, { host: 'pay.example.test', origin: 'https://pay.example.test' });
    expect(cancelled.status).toBe(303);
    const key = { authorization: `Bearer ${SANDBOX_KEY}`, host: `evil.example:${port}` };
    expect((await send(s, 'GET', '/v1/transactions', key)).status).toBe(200);
    expect((await send(s, 'GET', '/_sandbox/clock', key)).status).toBe(200);
  });

  it('in process, the loopback names pass on any port; other names need pageHosts; a bad entry is refused', async () => {
    const service = createReferenceService({ clock: 'manual' });
    const get = async (url: string, s = service) => (await s.fetch(new Request(url))).status;
    expect([
      await get('http://localhost/_dashboard'),
      await get('http://127.0.0.1:9999/_dashboard'),
      await get('http://[::1]:1/_dashboard'),
    ]).toEqual([200, 200, 200]);
    expect([await get('http://local/_dashboard'), await get('http://127.evil.example/_dashboard')]).toEqual([403, 403]);
    const post = await service.fetch(
      new Request('http://localhost/_dashboard/deliveries/dlv_1/resend', { method: 'POST', headers: { referer: 'https://evil.example/' } }),
    );
    expect(post.status).toBe(403);
    service.close();
    const named = createReferenceService({ clock: 'manual', pageHosts: ['local'] });
    expect(await get('http://local/_dashboard', named)).toBe(200);
    named.close();
    for (const bad of ['http://pay.local', 'pay.local/x', 'a b', 'user@pay.local', '']) {
      expect(() => createReferenceService({ pageHosts: [bad] }), bad).toThrow(/^\[@payhook\/reference\] pageHosts: .* is not a host name/);
    }
    expect(() => createReferenceService({ publicUrl: 'pay.example.test' })).toThrow(/^\[@payhook\/reference\] publicUrl: .* is not a URL/);
  });

  it('a Host header that is not a host name is a 400, and the server keeps serving', async () => {
    const { s, port } = await scene();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end('GET /_dashboard HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await send(s, 'GET', '/_dashboard')).status).toBe(200);
  });
});
