// nodeBoard behind Express's body parsers and fastifyBoard in a Fastify app, on both majors of
// each, over real HTTP on 127.0.0.1.
import http from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, memoryStore, sign } from '@payhook/core';
import { createBoard, type Board } from '@payhook/board';
import { fastifyBoard, nodeBoard } from '@payhook/board/node';
import { BASE, eventBody, formToken, SECRET } from '@payhook/test-support/apps/board-app';

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!();
});

/** A receiver whose ledger holds one processed delivery, and the board over it. */
async function boardWithOneDelivery() {
  const receiver = createReceiver({ secret: SECRET, store: memoryStore({ ledger: true }), logger: () => {} }).on(
    'payment.success',
    () => {},
  );
  const body = eventBody('ref_mount');
  await receiver.handle(
    new Request('http://127.0.0.1/webhooks', { method: 'POST', headers: { 'x-service-signature': sign(body, SECRET) }, body }),
  );
  await receiver.idle();
  const [entry] = await receiver.store.ledger!.list({ reference: 'ref_mount' });
  const board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }) });
  return { board, id: entry!.id, ledger: receiver.store.ledger! };
}

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The confirm page's cookie and token, then a post as the browser sends it. */
async function poster(origin: string, id: string) {
  const page = await fetch(`${origin}${BASE}/confirm?action=replay&id=${encodeURIComponent(id)}`);
  expect(page.status).toBe(200);
  const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
  const token = formToken(await page.text())!;
  const post = (body: string, type = 'application/x-www-form-urlencoded') =>
    fetch(`${origin}${BASE}/actions/replay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin, 'sec-fetch-site': 'same-origin', 'content-type': type },
      body,
    });
  return { token, post };
}

const EXPRESS = [
  ['express 4.18.0', express4 as unknown as typeof express5],
  ['express 5.3.0', express5],
] as const;

describe.each(EXPRESS)('nodeBoard on %s', (_name, express) => {
  const parsers = [
    ['no body parser', undefined],
    ['express.urlencoded({ extended: false }) before it', express.urlencoded({ extended: false })],
    ['express.urlencoded({ extended: true }) before it', express.urlencoded({ extended: true })],
  ] as const;

  it.each(parsers)('takes a posted form with %s: a replay with the token is done, one without it refused', async (_what, parser) => {
    const { board, id, ledger } = await boardWithOneDelivery();
    const app = express();
    if (parser) app.use(parser);
    app.use(board.basePath, nodeBoard(board));
    const origin = await serve(app);
    const { token, post } = await poster(origin, id);

    const replay = await post(new URLSearchParams({ csrf: token, id }).toString());
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toMatch(new RegExp(`^${BASE}/deliveries/[^/?]+\\?after=replay$`));
    expect(await ledger.list({ reference: 'ref_mount' })).toHaveLength(2);
    expect((await post(new URLSearchParams({ id }).toString())).status).toBe(403);
    expect(await ledger.list({ reference: 'ref_mount' })).toHaveLength(2);
  });
});

const FASTIFY = [
  ['fastify 4.0.0', fastify4 as unknown as typeof fastify5],
  ['fastify 5.12.8', fastify5],
] as const;

describe.each(FASTIFY)('fastifyBoard on %s', (_name, fastify) => {
  async function start(board: Board) {
    const app = fastify();
    await app.register(fastifyBoard(board));
    app.post('/echo', async (request) => request.body);
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    open.push(() => app.close());
    return origin;
  }

  it('serves the pages at basePath and under it, and leaves the rest of the app to its own parsers and routes', async () => {
    const { board } = await boardWithOneDelivery();
    const origin = await start(board);
    for (const path of [BASE, `${BASE}/`]) {
      const page = await fetch(`${origin}${path}`);
      expect([path, page.status]).toEqual([path, 200]);
      expect(await page.text()).toContain('>ref_mount<');
    }
    const head = await fetch(`${origin}${BASE}/`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'text/html; charset=utf-8', '']);
    const echo = await fetch(`${origin}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await echo.json()).toEqual({ a: 1 });
    expect((await fetch(`${origin}/admin/paymentsX`)).status).toBe(404);
  });

  it('takes a posted form: a replay with the token is done; multipart, a big form or no token is refused by the board', async () => {
    const { board, id, ledger } = await boardWithOneDelivery();
    const origin = await start(board);
    const { token, post } = await poster(origin, id);

    expect((await post(new URLSearchParams({ id }).toString())).status).toBe(403);
    // A type Fastify has no parser of its own for (it would answer 415): the board's answer.
    const multipart = await post(
      `--b\r\ncontent-disposition: form-data; name="csrf"\r\n\r\n${token}\r\n--b--\r\n`,
      'multipart/form-data; boundary=b',
    );
    expect([multipart.status, await multipart.text()]).toEqual([413, 'An action is a small form; this was not one.\n']);
    expect((await post(new URLSearchParams({ csrf: token, id, pad: 'x'.repeat(5000) }).toString())).status).toBe(413);
    expect(await ledger.list({ reference: 'ref_mount' })).toHaveLength(1);

    const replay = await post(new URLSearchParams({ csrf: token, id }).toString());
    expect(replay.status).toBe(303);
    expect(await ledger.list({ reference: 'ref_mount' })).toHaveLength(2);
  });
});

describe('nodeBoard, as the board sees the Node request and as the response is written', () => {
  /** A board that answers `answer` and keeps the request it was handed; a Node response that records what was written. */
  function mount(answer: () => Response | Promise<Response>) {
    const seen: Request[] = [];
    const board = { basePath: BASE, fetch: async (r: Request) => (seen.push(r), answer()) } as unknown as Board;
    const res = {
      statusCode: 0,
      headers: {} as Record<string, unknown>,
      written: [] as string[],
      head: undefined as unknown,
      ended: false,
      get headersSent() {
        return this.written.length > 0;
      },
      setHeader(name: string, value: unknown) {
        this.headers[name] = value;
      },
      writeHead(status: number, headers: unknown) {
        this.head = [status, headers];
      },
      write(chunk: Uint8Array) {
        this.written.push(new TextDecoder().decode(chunk));
      },
      end() {
        this.ended = true;
      },
      on() {},
    };
    const handle = (req: object) => nodeBoard(board)(req as http.IncomingMessage, res as unknown as http.ServerResponse);
    return { seen, res, handle };
  }
  const ok = () => new Response('hello');

  it('hands the board the full URL, https on a TLS socket, and the headers but the body’s length and encoding', async () => {
    const { seen, handle } = mount(ok);
    const headers = {
      host: 'shop.example',
      'x-multi': ['a', 'b'],
      'content-length': '5',
      'transfer-encoding': 'chunked',
      'x-none': undefined,
    };
    await handle({ method: 'GET', originalUrl: `${BASE}/x?y=1`, url: '/x?y=1', headers, socket: { encrypted: true } });
    expect(seen[0]!.url).toBe(`https://shop.example${BASE}/x?y=1`);
    expect([...seen[0]!.headers]).toEqual([
      ['host', 'shop.example'],
      ['x-multi', 'a, b'],
    ]);
    await handle({ headers: {}, socket: {} });
    expect([seen[1]!.method, seen[1]!.url]).toEqual(['GET', 'http://localhost/']);
    await handle({ url: '/z', headers: { host: 'h.example' }, socket: { encrypted: false } });
    expect(seen[2]!.url).toBe('http://h.example/z');
  });

  it('sends on a form a body parser already read, as a form; else the request’s own stream', async () => {
    const { seen, handle } = mount(ok);
    const post = (extra: object) => handle({ method: 'POST', url: '/p', headers: { host: 'h' }, socket: {}, ...extra });
    await post({ _body: true, body: { a: 'x', b: ['1', '2'], n: 5, m: [3, 'y'] } });
    await post({ _body: true, body: 'raw=1' });
    await post({ readableEnded: true, body: new TextEncoder().encode('q=1') });
    await post({ _body: true, body: null });
    await post({ _body: true, body: 42 });
    await handle(Object.assign(Readable.from([Buffer.from('z=9')]), { method: 'POST', url: '/p', headers: { host: 'h' }, socket: {} }));
    const bodies = await Promise.all(seen.map((r) => r.text()));
    expect(bodies).toEqual(['a=x&b=1&b=2&m=y', 'raw=1', 'q=1', '', '', 'z=9']);
  });

  it('writes the status, the headers, every cookie, and the body; no body for HEAD or an empty answer', async () => {
    const answer = () => {
      const headers = new Headers({ 'x-a': '1' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response('hello', { status: 201, headers });
    };
    const one = mount(answer);
    await one.handle({ method: 'GET', url: '/', headers: {}, socket: {} });
    expect([one.res.statusCode, one.res.headers['x-a'], one.res.headers['set-cookie'], one.res.written.join(''), one.res.ended]).toEqual([
      201,
      '1',
      ['a=1', 'b=2'],
      'hello',
      true,
    ]);
    const head = mount(answer);
    await head.handle({ method: 'HEAD', url: '/', headers: {}, socket: {} });
    expect([head.res.statusCode, head.res.written, head.res.ended]).toEqual([201, [], true]);
    // A body handed back for a HEAD is cancelled, not left open: a live stream would keep its place.
    let cancelled = false;
    const stream = mount(() => new Response(new ReadableStream({ cancel: () => void (cancelled = true) })));
    await stream.handle({ method: 'HEAD', url: '/', headers: {}, socket: {} });
    expect([stream.res.written, cancelled]).toEqual([[], true]);
    const empty = mount(() => new Response(null, { status: 204 }));
    await empty.handle({ method: 'GET', url: '/', headers: {}, socket: {} });
    expect([empty.res.statusCode, empty.res.head, empty.res.ended, 'set-cookie' in empty.res.headers]).toEqual([
      204,
      undefined,
      true,
      false,
    ]);
  });

  it('answers 500 when the board throws, and only ends a response already begun', async () => {
    const thrown = mount(() => {
      throw new Error('down');
    });
    await thrown.handle({ method: 'GET', url: '/', headers: {}, socket: {} });
    expect([thrown.res.head, thrown.res.ended]).toEqual([[500, { 'content-type': 'text/plain; charset=utf-8' }], true]);
    let sent = false;
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new Error('gone'));
        else controller.enqueue(new TextEncoder().encode('begun'));
        sent = true;
      },
    });
    const midway = mount(() => new Response(broken));
    await midway.handle({ method: 'GET', url: '/', headers: {}, socket: {} });
    expect([midway.res.written, midway.res.head, midway.res.ended]).toEqual([['begun'], undefined, true]);
  });
});
