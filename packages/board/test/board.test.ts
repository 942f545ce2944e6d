import { describe, expect, it } from 'vitest';
import { createReceiver, memoryStore } from '@payhook/core';
import { createBoard } from '@payhook/board';
import { BASE, boardApps, eventBody, formToken, getPage } from '@payhook/test-support/apps/board-app';

const start = boardApps();

describe('mounting', () => {
  it('refuses to mount without authorize, or over a store that keeps no ledger', () => {
    const receiver = createReceiver({ secret: 's', store: memoryStore({ ledger: true }) });
    // @ts-expect-error: what a merchant who forgot authorize writes
    expect(() => createBoard({ receiver, basePath: '/board' })).toThrow(
      /^\[@payhook\/board\] createBoard needs an authorize\(request\) function/,
    );
    const bare = createReceiver({ secret: 's', store: memoryStore() });
    expect(() => createBoard({ receiver: bare, basePath: '/board', authorize: () => ({ user: 'a' }) })).toThrow(/keeps no ledger/);
    expect(() => createBoard({ receiver, basePath: 'board', authorize: () => ({ user: 'a' }) })).toThrow(/basePath must be/);
  });

  it('checks each option, and says what it takes', () => {
    const receiver = createReceiver({ secret: 's', store: memoryStore({ ledger: true }) });
    const authorize = () => ({ user: 'a' });
    const made = (options: Record<string, unknown>) => () => createBoard({ receiver, basePath: '/board', authorize, ...options } as never);
    expect(made({ receiver: undefined })).toThrow('[@payhook/board] createBoard needs the receiver createReceiver() made, as `receiver`.');
    expect(made({ receiver: { replay: () => {} } })).toThrow(
      '[@payhook/board] createBoard needs the receiver createReceiver() made, as `receiver`.',
    );
    expect(made({ receiver: { store: receiver.store } })).toThrow('createBoard needs the receiver createReceiver() made');
    for (const basePath of ['board', '/a b', '/a//b', '//a', '/<x>', 42, undefined])
      expect(made({ basePath })).toThrow(
        `[@payhook/board] basePath must be the path the board is mounted at, starting with /, such as '/admin/payments'; got ${JSON.stringify(basePath)}.`,
      );
    for (const pageSize of [0, 201, 1.5, Number.NaN])
      expect(made({ pageSize })).toThrow(
        new RangeError(`[@payhook/board] pageSize must be a whole number from 1 to 200; got ${pageSize}. Leave it unset for 50.`),
      );
    for (const live of [{ intervalMs: 9 }, { intervalMs: Number.POSITIVE_INFINITY }, { maxOpen: -1 }, { maxOpen: 1.5 }])
      expect(made({ live })).toThrow(
        new RangeError(
          `[@payhook/board] live.intervalMs must be at least 10 ms and live.maxOpen a whole number (0 turns live updates off); got ${JSON.stringify(live)}. Leave them unset for 1,000 ms and 20.`,
        ),
      );
    // The edges are taken; a trailing slash is the same mount.
    for (const options of [
      { pageSize: 1 },
      { pageSize: 200 },
      { live: { intervalMs: 10, maxOpen: 0 } },
      { basePath: '' },
      { basePath: '/' },
    ])
      expect(made(options)).not.toThrow();
    expect(createBoard({ receiver, basePath: '/a-b_c.d/~e/', authorize }).basePath).toBe('/a-b_c.d/~e');
    expect(createBoard({ receiver, basePath: '/', authorize }).basePath).toBe('');
  });

  it('pages as many records as pageSize says, 50 unless set', async () => {
    const { origin, deliver } = await start();
    for (let i = 0; i < 51; i++) await deliver(eventBody(`ref_${i}`));
    const rows = (text: string) => text.match(/<tr data-id=/g)?.length;
    expect(rows((await getPage(origin, `${BASE}/`)).text)).toBe(50);
    const one = await start({ pageSize: 1 });
    await one.deliver(eventBody('ref_a'));
    await one.deliver(eventBody('ref_b'));
    expect(rows((await getPage(one.origin, `${BASE}/`)).text)).toBe(1);
  });

  it("at the root of a site (basePath '/'), links its list as / and sets its cookie for /", async () => {
    const { origin } = await start({ basePath: '/' });
    const page = await getPage(origin, '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1><a href="/">payhook deliveries</a></h1>');
    expect(page.text).toContain('<link rel="stylesheet" href="/assets/board.css">');
    expect(page.headers.getSetCookie()[0]).toMatch(/; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  it('sets its token cookie once, on a page only, and Secure when the page came over https', async () => {
    const { board, origin } = await start();
    const first = await getPage(origin, `${BASE}/`);
    expect(first.cookie).toMatch(/^payhook_board=[\w-]{43}$/);
    // With the cookie: no new one, and its token is the forms'.
    const again = await getPage(origin, `${BASE}/confirm?action=retry-all`, first.cookie);
    expect([again.headers.getSetCookie(), formToken(again.text)]).toEqual([[], first.cookie!.slice('payhook_board='.length)]);
    for (const path of ['/assets/board.css', '/chart.svg', '/nope'])
      expect([path, (await getPage(origin, `${BASE}${path}`)).headers.getSetCookie().length]).toEqual([path, path === '/nope' ? 1 : 0]);
    const secure = await board.fetch(new Request(`https://shop.example${BASE}/`));
    expect(secure.headers.getSetCookie()[0]).toMatch(
      /^payhook_board=[\w-]{43}; Path=\/admin\/payments; HttpOnly; SameSite=Strict; Secure$/,
    );
  });

  it('answers 401 to whom authorize says no, the app’s own answer when it gives one, and 404 outside its path', async () => {
    const { origin } = await start({
      authorize: (request) =>
        request.headers.get('x-user') === 'ada'
          ? { user: 'ada' }
          : request.headers.get('x-login')
            ? Response.redirect('http://127.0.0.1/login', 302)
            : false,
    });
    expect((await fetch(`${origin}${BASE}/`)).status).toBe(401);
    expect((await fetch(`${origin}${BASE}/assets/board.css`)).status).toBe(401);
    expect((await fetch(`${origin}${BASE}/actions/erase`, { method: 'POST' })).status).toBe(401);
    const login = await fetch(`${origin}${BASE}/`, { headers: { 'x-login': '1' }, redirect: 'manual' });
    expect([login.status, login.headers.get('location')]).toEqual([302, 'http://127.0.0.1/login']);
    const ok = await fetch(`${origin}${BASE}`, { headers: { 'x-user': 'ada' } });
    expect(ok.status).toBe(200);
    expect((await fetch(`${origin}/admin/paymentsX`, { headers: { 'x-user': 'ada' } })).status).toBe(404);
  });

  it('sends a policy that runs only its own files, and a token cookie only for its path', async () => {
    const { origin } = await start();
    const page = await getPage(origin, `${BASE}/`);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    // Its one script is a file of its own; no inline script, style or handler.
    expect([...page.text.matchAll(/<script[^>]*>/g)].map((m) => m[0])).toEqual([`<script src="${BASE}/assets/board.js" defer>`]);
    expect(page.text).not.toMatch(/<script[^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
    expect((await fetch(`${origin}${BASE}/assets/board.js`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // A browser sends the board's own posts with their Origin only under a policy that keeps it same-origin.
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.headers.getSetCookie()[0]).toMatch(/^payhook_board=[\w-]{43}; Path=\/admin\/payments; HttpOnly; SameSite=Strict$/);
    const css = await fetch(`${origin}${BASE}/assets/board.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });
});

describe('the delivery list and one delivery', () => {
  it('lists newest first, filters by reference, outcome and open dead letters, and pages', async () => {
    const { origin, deliver, refused } = await start({ pageSize: 2 });
    refused.add('ref_refused');
    for (const r of ['ref_a', 'ref_b', 'ref_refused']) expect((await deliver(eventBody(r))).status).toBe(200);
    await deliver(eventBody('ref_a')); // a copy: duplicate
    const first = await getPage(origin, `${BASE}/`);
    const refs = (text: string) => [...text.matchAll(/<td class="value" data-label="Reference">([^<]+)<\/td>/g)].map((m) => m[1]);
    expect(refs(first.text)).toEqual(['ref_a', 'ref_refused']);
    const older = /rel="next" href="([^"]+)"/.exec(first.text)![1]!.replaceAll('&amp;', '&');
    expect(refs((await getPage(origin, older)).text)).toEqual(['ref_b', 'ref_a']);
    expect(refs((await getPage(origin, `${BASE}/?reference=ref_b`)).text)).toEqual(['ref_b']);
    expect(refs((await getPage(origin, `${BASE}/?outcome=duplicate`)).text)).toEqual(['ref_a']);
    expect(refs((await getPage(origin, `${BASE}/?dead=open`)).text)).toEqual(['ref_refused']);
    const bad = await getPage(origin, `${BASE}/?outcome=<b>x</b>&since=yesterday`);
    expect(bad.text).toContain('&quot;&lt;b&gt;x&lt;/b&gt;&quot; is not an outcome payhook gives.');
    expect(bad.text).toContain('is not a time');
  });

  it('shows one delivery: its answer, its body pretty-printed, and every attempt of its reference', async () => {
    const { origin, deliver, receiver } = await start();
    await deliver(eventBody('ref_one'));
    await deliver(eventBody('ref_one'));
    const [copy, firstOne] = await receiver.store.ledger!.list({ reference: 'ref_one' });
    const page = await getPage(origin, `${BASE}/deliveries/${firstOne!.id}`);
    expect(page.text).toContain('<dt>Attempt</dt><dd>1 of the event</dd>');
    expect(page.text).toContain('<dt>Signature</dt><dd>valid, secret #1 of the configured ones</dd>');
    expect(page.text).toContain('  &quot;reference&quot;: &quot;ref_one&quot;,\n');
    const timeline = /<ol class="timeline" id="timeline">([\s\S]*?)<\/ol>/.exec(page.text)![1]!;
    expect(timeline.match(/<li/g)).toHaveLength(2);
    expect(timeline).toContain(`aria-current="true"><a href="${BASE}/deliveries/${firstOne!.id}"`);
    expect(timeline).toContain('duplicate');
    expect(copy!.outcome).toBe('duplicate');
    expect((await getPage(origin, `${BASE}/deliveries/nope`)).status).toBe(404);
  });

  it('shows what a stranger sent as text: markup, terminal escapes and bidi controls in a refused delivery', async () => {
    const { origin, deliver, receiver } = await start();
    const hostile = '<script>alert(1)</script>\u001b[2J\u202e<img src=x onerror=alert(2)>';
    const r = await deliver(eventBody(hostile, { event: '<b>payment.success</b>' }), 'sha256=00');
    expect(r.status).toBe(401);
    const [entry] = await receiver.store.ledger!.list({});
    for (const path of [`${BASE}/`, `${BASE}/deliveries/${entry!.id}`]) {
      const page = await getPage(origin, path);
      expect(page.text).not.toContain('<script>alert');
      expect(page.text).not.toContain('<img src=x');
      expect(page.text.includes('\u001b') || page.text.includes('\u202e')).toBe(false);
    }
    const detail = (await getPage(origin, `${BASE}/deliveries/${entry!.id}`)).text;
    expect(detail).toContain('&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[2J\\u202e&lt;img');
  });
});

describe('actions', () => {
  /** A page's token and cookie, then a post of the form as the browser sends it. */
  const session = async (origin: string) => {
    const page = await getPage(origin, `${BASE}/`);
    const cookie = page.cookie!;
    const token = formToken((await getPage(origin, `${BASE}/confirm?action=retry-all`, cookie)).text)!;
    const post = (action: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${origin}${BASE}/actions/${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin, 'sec-fetch-site': 'same-origin', ...headers },
        body: new URLSearchParams(fields),
      });
    return { cookie, token, post };
  };

  it('replays (duplicate), retries a dead letter until it closes, and erases a payment, each audited with who did it', async () => {
    const { origin, deliver, refused, receiver, audit } = await start();
    await deliver(eventBody('ref_done'));
    refused.add('ref_dead');
    await deliver(eventBody('ref_dead'));
    const ledger = receiver.store.ledger!;
    const [done] = await ledger.list({ reference: 'ref_done' });
    const [dead] = await ledger.list({ deadLetters: 'open' });
    const { token, post } = await session(origin);

    const replay = await post('replay', { csrf: token, id: done!.id });
    expect(replay.status).toBe(303);
    const after = await getPage(origin, replay.headers.get('location')!);
    expect(after.text).toContain('Replayed: <span class="outcome good"');
    expect(after.text).toMatch(/Replayed: <span[^>]*>duplicate<\/span> \(200\)/);

    refused.delete('ref_dead'); // the merchant fixed the order system
    const retry = await post('retry', { csrf: token, id: dead!.id });
    expect(retry.status).toBe(303);
    expect((await getPage(origin, retry.headers.get('location')!)).text).toMatch(
      /Retried: <span class="outcome good"[^>]*>processed<\/span> \(200\)\. The dead letter is closed\./,
    );
    expect(await ledger.list({ deadLetters: 'open' })).toEqual([]);

    const erase = await post('erase', { csrf: token, reference: 'ref_done' });
    expect(erase.headers.get('location')).toBe(`${BASE}?erased=2`);
    expect(await ledger.list({ reference: 'ref_done' })).toEqual([]);

    const lines = audit.filter((l) => l.fields.board !== undefined).map((l) => [l.fields.board!.user, l.fields.board!.action]);
    expect(lines).toEqual([
      ['ada@shop.example', 'replay'],
      ['ada@shop.example', 'retry'],
      ['ada@shop.example', 'erase'],
    ]);
  });

  it('refuses a post without the page’s token, from another site or origin, too big, or read-only: 403 or 413, nothing done', async () => {
    const { origin, deliver, receiver, audit } = await start();
    await deliver(eventBody('ref_keep'));
    const { token, post, cookie } = await session(origin);
    const cases: Array<[string, Promise<Response>]> = [
      ['no token', post('erase', { reference: 'ref_keep' })],
      ['another token', post('erase', { reference: 'ref_keep', csrf: 'A'.repeat(43) })],
      ['no cookie', post('erase', { reference: 'ref_keep', csrf: token }, { cookie: '' })],
      ['cross-site', post('erase', { reference: 'ref_keep', csrf: token }, { 'sec-fetch-site': 'cross-site' })],
      ['another origin', post('erase', { reference: 'ref_keep', csrf: token }, { origin: 'https://evil.example' })],
      [
        'a hidden origin, cross-site',
        post('erase', { reference: 'ref_keep', csrf: token }, { origin: 'null', 'sec-fetch-site': 'cross-site' }),
      ],
    ];
    for (const [name, response] of cases) expect([name, (await response).status]).toEqual([name, 403]);
    const big = await post('erase', { reference: 'ref_keep', csrf: token, pad: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect(await receiver.store.ledger!.list({ reference: 'ref_keep' })).toHaveLength(1);
    expect(audit.filter((l) => l.fields.board?.refused !== undefined)).toHaveLength(6);
    expect(cookie).toBeDefined();
    // A browser that hides the origin ("null") but says same-origin is the board's own page.
    expect((await post('erase', { reference: 'ref_keep', csrf: token }, { origin: 'null' })).status).toBe(303);
    expect(await receiver.store.ledger!.list({ reference: 'ref_keep' })).toHaveLength(0);

    const readOnly = await start({ readOnly: true });
    await readOnly.deliver(eventBody('ref_ro'));
    const ro = await session(readOnly.origin);
    expect((await ro.post('erase', { csrf: ro.token ?? '', reference: 'ref_ro' })).status).toBe(403);
    const [entry] = await readOnly.receiver.store.ledger!.list({});
    expect((await getPage(readOnly.origin, `${BASE}/deliveries/${entry!.id}`)).text).not.toContain('/confirm');
    expect(await readOnly.receiver.store.ledger!.list({ reference: 'ref_ro' })).toHaveLength(1);
  });
});
