// What reaches the board before it shows or does anything, over real HTTP on 127.0.0.1: the name a
// request was sent to (DNS rebinding), a form as Fastify hands it on (authorize before any byte is
// read, the body's deadline after), a HEAD of the live stream, and who did what in the default log.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, memoryStore, sign, type Receiver } from '@payhook/core';
import { manualClock } from '@payhook/testing';
import { createBoard, type Board, type BoardOptions } from '@payhook/board';
import { fastifyBoard, nodeBoard } from '@payhook/board/node';
import { BASE, boardApps, eventBody, formToken, getPage, SECRET } from '@payhook/test-support/apps/board-app';
import { sleep, until } from '@payhook/test-support/wait';

const start = boardApps();
const open: Array<() => unknown> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!();
});

/** A request with the headers given as they are (Host too), and its answer read whole. */
function send(origin: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; type: string | undefined; text: string }>((resolve, reject) => {
    const req = http.request(`${origin}${path}`, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], text }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A post that says `declared` bytes, sends `first`, and stalls: the answer it gets, or 'no answer' after `ms` of real time. */
function stalledPost(origin: string, path: string, headers: Record<string, string>, first: string, declared: number, ms: number) {
  const req = http.request(`${origin}${path}`, { method: 'POST', headers: { ...headers, 'content-length': String(declared) } });
  open.push(() => req.destroy());
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  req.write(first);
  // The subject is a socket that stalls: only the real clock can say that no answer came.
  return Promise.race([answer, sleep(ms).then(() => 'no answer' as const)]);
}

const FASTIFY = [
  ['fastify 4.0.0', fastify4 as unknown as typeof fastify5],
  ['fastify 5.12.8', fastify5],
] as const;

describe.each(FASTIFY)('fastifyBoard on %s reads nothing before authorize', (_name, fastify) => {
  async function mount(options: Partial<BoardOptions> & { receiver?: Receiver } = {}) {
    const receiver = options.receiver ?? createReceiver({ secret: SECRET, store: memoryStore({ ledger: true }), logger: () => {} });
    let asked = 0;
    const authorize = options.authorize ?? (() => ({ user: 'ada@shop.example' }));
    const board = createBoard({ basePath: BASE, ...options, receiver, authorize: (r) => (asked++, authorize(r)) });
    const app = fastify();
    await app.register(fastifyBoard(board));
    app.post('/echo', async (request) => request.body);
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    open.push(() => app.close());
    return { origin, asked: () => asked };
  }
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  it('a stranger’s 64 KB post is 401, not 413; the app’s own JSON route parses as before', async () => {
    const { origin, asked } = await mount({ authorize: () => false });
    const big = await send(origin, `${BASE}/actions/erase`, {
      method: 'POST',
      headers: form,
      body: `reference=r&pad=${'x'.repeat(64 * 1024)}`,
    });
    expect([big.status, big.text, asked()]).toEqual([401, 'Sign in to see the board.\n', 1]);
    const echo = await send(origin, '/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect([echo.status, JSON.parse(echo.text)]).toEqual([200, { a: 1 }]);
  });

  it('a stranger’s post that stalls after a few bytes is answered 401 at once', async () => {
    const { origin } = await mount({ authorize: () => false });
    const answer = await stalledPost(origin, `${BASE}/actions/erase`, form, 'csrf=', 1000, 3000);
    expect(answer).toEqual({ status: 401, text: 'Sign in to see the board.\n' });
  });

  it('a signed-in form that stalls is answered 408 when the receiver’s body deadline passes, and does nothing', async () => {
    const clock = manualClock();
    const lines: unknown[] = [];
    const logger = (...line: unknown[]) => lines.push(line);
    const receiver = createReceiver({ secret: SECRET, store: memoryStore({ ledger: true }), clock, bodyTimeoutMs: 2000, logger });
    const { origin } = await mount({ receiver });
    expect(clock.pending()).toBe(0);
    const answer = stalledPost(origin, `${BASE}/actions/retry-all`, form, 'csrf=abc', 1000, 5000);
    // The board reads the form itself, once authorize let it in: its deadline's timer is then set.
    await until(() => clock.pending() > 0, { what: 'the board waiting on the form', timeoutMs: 3000 });
    await clock.advance(1999);
    expect(clock.pending()).toBe(1);
    await clock.advance(1);
    expect(await answer).toEqual({ status: 408, text: 'The form did not arrive in time.\n' });
    expect(lines).toEqual([]);
  });

  it('answers no name a hostile page pointed at this machine, before authorize', async () => {
    const { origin, asked } = await mount();
    const port = new URL(origin).port;
    const evil = await send(origin, `${BASE}/`, { headers: { host: `evil.example:${port}` } });
    expect([evil.status, evil.text, asked()]).toEqual([421, 'This board is not served under this name.\n', 0]);
    expect((await send(origin, `${BASE}/`, { headers: { host: `localhost:${port}` } })).status).toBe(200);
  });
});

describe('the name a request was sent to (DNS rebinding), on node:http at 127.0.0.1', () => {
  it('refuses another name than localhost over loopback: 421, before authorize, nothing shown or done, and a warning', async () => {
    let asked = 0;
    const app = await start({ authorize: () => (asked++, { user: 'ada@shop.example' }) });
    await app.deliver(eventBody('ref_kept'));
    const port = new URL(app.origin).port;
    const { cookie } = await getPage(app.origin, `${BASE}/`);
    const token = formToken((await getPage(app.origin, `${BASE}/confirm?action=erase&reference=ref_kept`, cookie)).text)!;
    asked = 0;
    const evil = { host: `evil.example:${port}`, cookie: cookie! };
    const page = await send(app.origin, `${BASE}/`, { headers: evil });
    expect([page.status, page.type, page.text]).toEqual([421, 'text/plain; charset=utf-8', 'This board is not served under this name.\n']);
    const erase = await send(app.origin, `${BASE}/actions/erase`, {
      method: 'POST',
      headers: { ...evil, origin: `http://evil.example:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: token, reference: 'ref_kept' }).toString(),
    });
    expect([erase.status, asked]).toEqual([421, 0]);
    expect(await app.receiver.store.ledger!.list({ reference: 'ref_kept' })).toHaveLength(1);
    const warned = app.audit.filter((l) => l.fields.board?.host !== undefined);
    // One warning a name: the page asking again adds none.
    expect(warned.map((l) => [l.level, l.fields.board])).toEqual([
      ['warn', { host: `evil.example:${port}`, refused: expect.stringContaining('loopback') }],
    ]);
    expect(warned[0]!.message).toContain("add it to createBoard's `hosts`");
  });

  it('answers loopback names and addresses; another name on a loopback connection is refused whatever proxy headers it carries', async () => {
    const app = await start();
    const port = new URL(app.origin).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `admin.localhost:${port}`, 'localhost'])
      expect([host, (await send(app.origin, `${BASE}/`, { headers: { host } })).status]).toEqual([host, 200]);
    // A rebound page is its own origin: it may send X-Forwarded-* or Forwarded as it likes, so they open nothing.
    for (const header of ['x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip']) {
      const proxied = await send(app.origin, `${BASE}/`, { headers: { host: 'pay.example.com', [header]: '203.0.113.7' } });
      expect([header, proxied.status]).toEqual([header, 421]);
    }
  });

  it('with `hosts`, answers those names (with their port, when given) and loopback ones, and no other', async () => {
    const app = await start({ hosts: ['pay.example.com', 'admin.example.com:8443'] });
    const port = new URL(app.origin).port;
    const status = async (host: string, extra: Record<string, string> = {}) =>
      (await send(app.origin, `${BASE}/`, { headers: { host, ...extra } })).status;
    expect(await status('pay.example.com')).toBe(200);
    expect(await status('pay.example.com:8080')).toBe(200);
    expect(await status('admin.example.com:8443')).toBe(200);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status('admin.example.com:8080')).toBe(421);
    expect(await status('evil.example')).toBe(421);
    // A proxy's header lets no name in that `hosts` leaves out.
    expect(await status('evil.example', { 'x-forwarded-for': '203.0.113.7' })).toBe(421);
    // The web-standard handler, as Hono or Next hand it a request: the Host header decides.
    const viaFetch = (host: string) => app.board.fetch(new Request(`http://localhost${BASE}/`, { headers: { host } }));
    expect([(await viaFetch('pay.example.com')).status, (await viaFetch('evil.example')).status]).toEqual([200, 421]);
  });

  it('takes `hosts` only as host names, and `audit` only as a function, and says what each takes', async () => {
    for (const bad of [['https://pay.example.com'], ['pay.example.com/admin'], [''], [42], 'pay.example.com'])
      await expect(start({ hosts: bad as string[] })).rejects.toThrow(/^\[@payhook\/board\] hosts must be a list of the names/);
    await expect(start({ audit: 'db' as never })).rejects.toThrow(/^\[@payhook\/board\] audit must be a function/);
  });
});

describe('a HEAD of the live stream', () => {
  it('over node:http: the stream’s headers, no body, and no place taken from the GET after it', async () => {
    const app = await start({ live: { maxOpen: 1, intervalMs: 20 } });
    const head = await send(app.origin, `${BASE}/live`, { method: 'HEAD' });
    expect([head.status, head.type, head.text]).toEqual([200, 'text/event-stream; charset=utf-8', '']);
    const abort = new AbortController();
    open.push(() => abort.abort());
    const get = await fetch(`${app.origin}${BASE}/live`, { signal: abort.signal });
    expect([get.status, get.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
  });

  it('through board.fetch: no body, and the ledger is never asked', async () => {
    const app = await start({ live: { maxOpen: 1, intervalMs: 1000 } });
    const ledger = app.receiver.store.ledger!;
    const list = ledger.list.bind(ledger);
    let looks = 0;
    ledger.list = (q) => (looks++, list(q));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const head = await app.board.fetch(new Request(`${app.origin}${BASE}/live`, { method: 'HEAD' }));
      expect([head.status, head.headers.get('content-type'), head.body]).toEqual([200, 'text/event-stream; charset=utf-8', null]);
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect(looks).toBe(0);
      const get = await app.board.fetch(new Request(`${app.origin}${BASE}/live`));
      expect(get.status).toBe(200);
      await get.body!.cancel();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('who did what', () => {
  /** A board over a receiver given no logger (core's default: warnings and errors to the console), with one delivery. */
  async function defaultLogged(options: Partial<BoardOptions> = {}) {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore({ ledger: true }) }).on('payment.success', () => {});
    const body = eventBody('ref_audit');
    await receiver.handle(
      new Request('http://127.0.0.1/w', { method: 'POST', headers: { 'x-service-signature': sign(body, SECRET) }, body }),
    );
    await receiver.idle();
    const [entry] = await receiver.store.ledger!.list({});
    const board: Board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }), ...options });
    const server = http.createServer(nodeBoard(board));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push(() => new Promise((resolve) => server.close(resolve)));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { cookie } = await getPage(origin, `${BASE}/`);
    const token = formToken((await getPage(origin, `${BASE}/confirm?action=replay&id=${entry!.id}`, cookie)).text)!;
    const post = (csrf: string) =>
      send(origin, `${BASE}/actions/replay`, {
        method: 'POST',
        headers: { cookie: cookie!, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, id: entry!.id }).toString(),
      });
    return { id: entry!.id, receiver, post, token };
  }

  it('with no logger given, a replay on the board prints a line naming the user and the action', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    open.push(() => warn.mockRestore());
    const { id, post, token } = await defaultLogged();
    expect((await post(token)).status).toBe(303);
    const printed = warn.mock.calls.map((args) => String(args[0]));
    expect(printed).toContain(`[@payhook/board] ada@shop.example: replay of ${id}: duplicate (200)`);
  });

  it('with `audit`, it gets a record of each action done or refused, and the log keeps a done one at info', async () => {
    const records: unknown[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    open.push(() => warn.mockRestore());
    const before = Date.now();
    const { id, receiver, post, token } = await defaultLogged({ audit: (record) => void records.push(record) });
    expect((await post(token)).status).toBe(303);
    expect((await post('x'.repeat(43))).status).toBe(403);
    const [replay] = await receiver.store.ledger!.list({});
    expect(records).toEqual([
      {
        at: expect.any(Number),
        user: 'ada@shop.example',
        account: undefined,
        action: 'replay',
        target: { id, scope: undefined },
        result: { kind: 'done', outcome: 'duplicate', replay: replay!.id },
        message: `ada@shop.example: replay of ${id}: duplicate (200)`,
      },
      {
        at: expect.any(Number),
        user: 'ada@shop.example',
        account: undefined,
        action: 'replay',
        target: { id, reference: undefined },
        result: { kind: 'refused', why: 'a post without the page’s token (reload the board and try again)' },
        message: 'ada@shop.example: refused a post without the page’s token (reload the board and try again)',
      },
    ]);
    for (const r of records as Array<{ at: number }>) expect(r.at >= before && r.at <= Date.now()).toBe(true);
    // The hook keeps the trail: the default logger shows the refusal only.
    expect(warn.mock.calls.map((args) => String(args[0]))).toEqual([
      '[@payhook/board] ada@shop.example: refused a post without the page’s token (reload the board and try again)',
    ]);
  });

  it('with an `audit` that throws: the action is done and answered all the same, and the error is logged', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    open.push(() => error.mockRestore());
    const { receiver, post, token } = await defaultLogged({
      audit: () => {
        throw new Error('audit table is gone');
      },
    });
    expect((await post(token)).status).toBe(303);
    expect(await receiver.store.ledger!.list({})).toHaveLength(2);
    expect(error.mock.calls.map((args) => String(args[0]))).toEqual([
      expect.stringMatching(
        /^\[@payhook\/board\] the audit hook failed on "ada@shop\.example: replay of .+: Error: audit table is gone\. The action itself is done; fix the hook\.$/,
      ),
    ]);
  });
});
