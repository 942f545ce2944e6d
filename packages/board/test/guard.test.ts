// The guard on its own: what a post must carry and what a form may weigh. The board's HTTP tests
// show it in place; these pin each rule. (The template tag is core's: packages/core/test/protocol/escape-text.test.ts.)
import { describe, expect, it } from 'vitest';
import { manualClock } from '@payhook/testing';
import { MAX_FORM_BYTES, newToken, readForm, refusal, SECURITY_HEADERS, tokenCookie, tokenOf } from '../src/base/guard.js';
import { createReceiver, memoryStore } from '@payhook/core';
import { createBoard } from '@payhook/board';
import { BASE, boardApps, eventBody, formToken, getPage, SECRET } from '@payhook/test-support/apps/board-app';

const TOKEN = 'A'.repeat(42) + 'b';
const post = (headers: Record<string, string>, url = 'http://shop.example/admin/payments/actions/replay') =>
  new Request(url, { method: 'POST', headers });
const form = (fields: Record<string, string>) => new URLSearchParams(fields);
/** The token with its character at `i` changed, and its length kept: the first, a middle one, or the last. */
const oneOff = (token: string, i: number) => `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`;
const start = boardApps();

describe('the token', () => {
  it('is read only from the board’s own cookie, and only when well formed', () => {
    expect(tokenOf(post({ cookie: `a=1; payhook_board=${TOKEN}; b=2` }))).toBe(TOKEN);
    expect(tokenOf(post({ cookie: `other=${TOKEN}` }))).toBeUndefined();
    expect(tokenOf(post({ cookie: `payhook_board=${TOKEN}x` }))).toBeUndefined();
    expect(tokenOf(post({ cookie: `payhook_board=x${TOKEN}` }))).toBeUndefined();
    expect(tokenOf(post({ cookie: `payhook_board=${TOKEN.slice(1)}=` }))).toBeUndefined();
    expect(tokenOf(post({ cookie: 'payhook_board' }))).toBeUndefined();
    expect(tokenOf(post({}))).toBeUndefined();
  });

  it('is 32 random bytes in base64url, and its cookie is HttpOnly, SameSite=Strict, for the board’s path', () => {
    const tokens = new Set(Array.from({ length: 50 }, newToken));
    expect(tokens.size).toBe(50);
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenCookie(TOKEN, '/admin/payments', false)).toBe(`payhook_board=${TOKEN}; Path=/admin/payments; HttpOnly; SameSite=Strict`);
    expect(tokenCookie(TOKEN, '', true)).toBe(`payhook_board=${TOKEN}; Path=/; HttpOnly; SameSite=Strict; Secure`);
  });
});

describe('a post may act', () => {
  const url = new URL('http://shop.example/admin/payments/actions/replay');
  const withToken = form({ csrf: TOKEN });
  const cookie = `payhook_board=${TOKEN}`;
  const why = (headers: Record<string, string>, fields = withToken) => refusal(post({ cookie, ...headers }), url, fields);

  it('from the board’s own page: same site, its origin (by the URL’s host or the Host header), its token', () => {
    expect(why({ 'sec-fetch-site': 'same-origin', origin: 'http://shop.example' })).toBeUndefined();
    expect(why({ origin: 'https://shop.example' })).toBeUndefined(); // TLS ended by a proxy
    expect(why({ origin: 'http://public.example', host: 'public.example' })).toBeUndefined(); // Next's request.url
    expect(why({})).toBeUndefined(); // a client that is no browser: the token alone
    expect(why({ origin: 'null', 'sec-fetch-site': 'same-origin' })).toBeUndefined();
  });

  it('never from another site or origin, a hidden origin the browser does not vouch for, or without the token', () => {
    expect(why({ 'sec-fetch-site': 'cross-site' })).toBe('a post from another site');
    expect(why({ 'sec-fetch-site': 'same-site' })).toBe('a post from another site');
    expect(why({ origin: 'http://evil.example' })).toBe('a post from another origin');
    expect(why({ origin: 'http://evil.example', host: 'public.example' })).toBe('a post from another origin');
    expect(why({ origin: 'null' })).toBe('a post from another origin');
    expect(why({ origin: 'not a url' })).toBe('a post from another origin');
    expect(why({}, form({}))).toMatch(/^a post without the page’s token/);
    expect(why({}, form({ csrf: `${TOKEN.slice(1)}c` }))).toMatch(/^a post without the page’s token/);
    expect(why({}, form({ csrf: TOKEN.slice(1) }))).toMatch(/^a post without the page’s token/);
    expect(refusal(post({}), url, withToken)).toMatch(/^a post without the page’s token/);
  });

  it('never with a token of the right length that differs in one character, wherever it is', () => {
    for (const i of [0, 1, 21, 41, 42]) {
      const token = oneOff(TOKEN, i);
      expect([i, token.length, token === TOKEN]).toEqual([i, 43, false]);
      expect([i, why({}, form({ csrf: token }))]).toEqual([i, expect.stringMatching(/^a post without the page’s token/)]);
      // The cookie's token one off and the form's the page's: the same refusal.
      const cookieOff = refusal(post({ cookie: `payhook_board=${token}` }), url, withToken);
      expect([i, cookieOff]).toEqual([i, expect.stringMatching(/^a post without the page’s token/)]);
    }
  });

  it('over the board: a form whose token is the page’s but for its first or a middle character is refused (403), and erases nothing', async () => {
    const { origin, deliver, receiver, audit } = await start();
    await deliver(eventBody('ref_keep'));
    const { cookie } = await getPage(origin, `${BASE}/`);
    const token = formToken((await getPage(origin, `${BASE}/confirm?action=erase&reference=ref_keep`, cookie)).text)!;
    const erase = (csrf: string) =>
      fetch(`${origin}${BASE}/actions/erase`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookie!, 'content-type': 'application/x-www-form-urlencoded', origin, 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ csrf, reference: 'ref_keep' }),
      });
    for (const i of [0, 21]) {
      const r = await erase(oneOff(token, i));
      expect([i, r.status, await r.text()]).toEqual([
        i,
        403,
        'Refused: a post without the page’s token (reload the board and try again).\n',
      ]);
    }
    expect(await receiver.store.ledger!.list({ reference: 'ref_keep' })).toHaveLength(1);
    expect(audit.filter((l) => l.fields.board?.refused !== undefined)).toHaveLength(2);
    // Each refusal is a warning naming who, what and why, for the support person reading the log.
    expect(audit.at(-1)).toEqual({
      level: 'warn',
      fields: {
        board: {
          user: 'ada@shop.example',
          account: undefined,
          action: 'erase',
          refused: 'a post without the page’s token (reload the board and try again)',
        },
      },
      message: '[@payhook/board] ada@shop.example: refused a post without the page’s token (reload the board and try again)',
    });
    // The page's own token, whole: it acts.
    expect((await erase(token)).status).toBe(303);
    expect(await receiver.store.ledger!.list({ reference: 'ref_keep' })).toHaveLength(0);
  });
});

describe('a form', () => {
  const streamed = (chunks: string[], headers: Record<string, string> = {}) =>
    new Request('http://shop.example/a', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', ...headers },
      body: new ReadableStream({
        start(c) {
          for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);

  it('is read whole across chunks, up to the limit', async () => {
    const read = await readForm(streamed(['csrf=ab', 'c&id=', '42']));
    expect(Object.fromEntries(read as URLSearchParams)).toEqual({ csrf: 'abc', id: '42' });
    expect(await readForm(streamed(['x='.padEnd(MAX_FORM_BYTES, 'y')]))).toBeInstanceOf(URLSearchParams);
  });

  it('is refused past the limit (said or streamed), or when it is not urlencoded', async () => {
    expect(await readForm(streamed(['x='.padEnd(MAX_FORM_BYTES + 1, 'y')]))).toBe('too-large');
    expect(await readForm(streamed(['x='.padEnd(MAX_FORM_BYTES, 'y'), 'z']))).toBe('too-large');
    expect(await readForm(streamed(['a=1'], { 'content-length': String(MAX_FORM_BYTES + 1) }))).toBe('too-large');
    expect(await readForm(streamed(['a=1'], { 'content-type': 'multipart/form-data; boundary=application/x-www-form-urlencoded' }))).toBe(
      'too-large',
    );
    expect(await readForm(new Request('http://shop.example/a', { method: 'POST', body: 'a=1' }))).toBe('too-large');
  });

  it('that does not arrive within the receiver’s body deadline is too slow', async () => {
    const clock = manualClock(0);
    const trickle = new Request('http://shop.example/a', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('csrf=')) }),
      duplex: 'half',
    } as RequestInit);
    const read = readForm(trickle, { ms: 5000, clock });
    await clock.advance(5000);
    expect(await read).toBe('too-slow');
  });

  it('is read whatever the case of its type, as a browser may send it', async () => {
    const read = await readForm(streamed(['csrf=abc'], { 'content-type': 'Application/X-WWW-Form-URLEncoded;Charset=UTF-8' }));
    expect(Object.fromEntries(read as URLSearchParams)).toEqual({ csrf: 'abc' });
  });

  it('posted to the board slower than the receiver’s body deadline is answered 408, and nothing is done', async () => {
    const clock = manualClock(Date.now());
    const audit: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      store: memoryStore({ ledger: true }),
      clock,
      bodyTimeoutMs: 2000,
      logger: (...line) => audit.push(line),
    });
    const board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }) });
    const trickle = new Request(`http://127.0.0.1${BASE}/actions/retry-all`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `payhook_board=${TOKEN}` },
      body: new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(`csrf=${TOKEN.slice(0, 10)}`)) }),
      duplex: 'half',
    } as RequestInit);
    const answer = board.fetch(trickle);
    // Once the board waits on the form (the deadline's timer is set), its time runs out.
    while (clock.pending() === 0) await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(1999);
    expect(clock.pending()).toBe(1);
    await clock.advance(1);
    const r = await answer;
    expect([r.status, await r.text(), r.headers.get('content-type')]).toEqual([
      408,
      'The form did not arrive in time.\n',
      'text/plain; charset=utf-8',
    ]);
    expect(audit).toEqual([]);
  });

  it('with no body is an empty form', async () => {
    const empty = new Request('http://shop.example/a', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([...((await readForm(empty)) as URLSearchParams)]).toEqual([]);
  });
});

describe('every answer’s headers', () => {
  it('run only the board’s own files, and allow no framing, sniffing, caching or referrer to other sites', () => {
    expect(SECURITY_HEADERS).toEqual({
      'content-security-policy':
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    });
  });
});
