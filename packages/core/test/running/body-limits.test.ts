import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock, signedBody } from '@payhook/testing';
import { adapterOf, readBodyLimited } from '../../src/adapter.js';
import { createReceiver, sign, type DeliveryReport } from '../../src/index.js';
import { processNodeRequest, toNodeListener, writeNodeResponse } from '../../src/node-bridge/node-bridge.js';

/*
 * The limits on what a sender controls before any signature is checked (issue 38: each case here
 * kills a mutant that the answer-only tests let through). A bound that only shows in time or
 * memory is asserted on a manual clock: the answer comes before the clock moves at all.
 */
const secret = 'whsec_body_limits';
const servers: http.Server[] = [];
afterEach(async () => {
  // Connections a failed test left open too: a test that timed out does not also time out its hook.
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
});

function setup(options: { maxBodyBytes?: number } = {}) {
  const clock = manualClock(0);
  const reports: DeliveryReport[] = [];
  const runs: string[] = [];
  const receiver = createReceiver({ secret, clock, ...options, logger: (_level, fields) => void reports.push(fields as DeliveryReport) });
  receiver.on('payment.success', (e) => void runs.push(e.reference));
  return { receiver, clock, reports, runs };
}

async function serve(listener: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes `bytes` in chunks of `size`, each once the last was flushed, then ends the request (chunked unless Content-Length is set). */
function inChunks(bytes: Buffer, size: number) {
  return (req: http.ClientRequest) => {
    let at = 0;
    const next = () => {
      if (at >= bytes.length) return void req.end();
      req.write(bytes.subarray(at, (at += size)), () => setImmediate(next));
    };
    next();
  };
}

/** A request whose body is written by `write` and never ended unless it says so; resolves with the status. */
function open(port: number, method: string, headers: Record<string, string>, write: (req: http.ClientRequest) => void) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: '/webhooks', headers }, (res) => {
      res.resume();
      resolve(res.statusCode!);
      req.destroy();
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
    write(req);
  });
}

describe('the Node bridge bounds a body before reading it all', () => {
  it('answers a declared Content-Length over the limit 413 at once, before a byte of it arrives', async () => {
    const { receiver, clock } = setup({ maxBodyBytes: 1_000 });
    const port = await serve(toNodeListener(receiver));
    const status = await open(port, 'POST', { 'content-length': '1001', 'x-service-signature': sign('x', secret) }, (req) =>
      req.flushHeaders(),
    );
    expect(status).toBe(413);
    expect(clock.now()).toBe(0);
  });

  it('answers a chunked body that goes on and on 413 as its bytes pass the limit, long before it ends or the body timeout', async () => {
    const { receiver, clock, runs } = setup({ maxBodyBytes: 1_000 });
    const port = await serve(toNodeListener(receiver));
    // Sent until the answer comes, a turn per 300 bytes. A bridge that miscounts would wait for the
    // end of a body that never ends: here the body ends after 64 times the limit, so one that waited
    // answers it (400, unsigned: 401) rather than time out the test.
    let sent = 0;
    const status = await open(port, 'POST', { 'transfer-encoding': 'chunked' }, (req) => {
      const more = () => {
        if (sent >= 64_000) return void req.end();
        sent += 300;
        req.write(Buffer.alloc(300, 0x20), () => setImmediate(more));
      };
      more();
    });
    expect({ status, ended: sent >= 64_000 }).toEqual({ status: 413, ended: false });
    expect(clock.now()).toBe(0);
    expect(runs).toEqual([]);
  }, 5_000);

  describe('counts the bytes of a body sent in many chunks, whatever its headers declare', () => {
    const event = createEvent('payment.success');
    const padded = (length: number) => {
      const json = JSON.stringify(event);
      return Buffer.from(json + ' '.repeat(length - Buffer.byteLength(json)));
    };
    const send = async (bytes: Buffer, declare: 'chunked' | 'content-length') => {
      const { receiver, clock, runs } = setup({ maxBodyBytes: 1_000 });
      const port = await serve(toNodeListener(receiver));
      const length: Record<string, string> =
        declare === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(bytes.length) };
      const status = await open(port, 'POST', { ...signedBody(bytes, { secret }).headers, ...length }, inChunks(bytes, 37));
      // Answered on the bytes alone: the body deadline's clock never moved.
      expect(clock.now()).toBe(0);
      return { status, ran: runs.length };
    };

    it.each(['chunked', 'content-length'] as const)(
      '%s: exactly the limit runs, signed',
      async (declare) => {
        expect(await send(padded(1_000), declare)).toEqual({ status: 200, ran: 1 });
      },
      5_000,
    );

    // Signed too: a bridge that let it through would answer 200 and run it.
    it('chunked: one byte over the limit is 413, and nothing runs', async () => {
      expect(await send(padded(1_001), 'chunked')).toEqual({ status: 413, ran: 0 });
    }, 5_000);

    it('chunked: many times the limit, ended, is 413, and nothing runs', async () => {
      expect(await send(padded(20_000), 'chunked')).toEqual({ status: 413, ran: 0 });
    }, 5_000);
  });

  // The answer lets the client read it (the rest of the body is drained for a moment), and then
  // the connection closes whatever the sender does: a 413 is no way to hold a socket open.
  it('closes the connection of a sender that goes on trickling after its 413', async () => {
    const { receiver } = setup({ maxBodyBytes: 1_000 });
    const port = await serve(toNodeListener(receiver));
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n');
    const trickle = setInterval(() => socket.writable && socket.write(' '.repeat(100)), 20);
    try {
      await closed;
    } finally {
      clearInterval(trickle);
    }
    expect(answer).toMatch(/^HTTP\/1\.1 413 [\s\S]*connection: close/i);
  }, 10_000);

  it('answers a GET 405 at once, without waiting for a body that never ends', async () => {
    const { receiver, clock } = setup();
    const port = await serve(toNodeListener(receiver));
    const status = await open(port, 'GET', { 'transfer-encoding': 'chunked' }, (req) => req.write('{'));
    expect(status).toBe(405);
    expect(clock.now()).toBe(0);
  });

  it('logs an upload that broke off as malformed at once, not as a slow body at the timeout', async () => {
    const { receiver, clock, reports } = setup();
    const port = await serve(toNodeListener(receiver));
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks', headers: { 'content-length': '100' } });
    req.on('error', () => {});
    req.write('{"event":', () => setTimeout(() => req.destroy(), 20));
    await vi.waitFor(() => expect(reports.map((r) => r.outcome)).toEqual(['malformed']), { timeout: 5_000 });
    expect(clock.now()).toBe(0);
  });

  it('uses the bytes a parser kept, a Buffer in req.body or req.rawBody as bytes or text, and holds them to the limit', async () => {
    const event = createEvent('payment.success');
    const { body, headers } = signedBody(event, { secret });
    const cases: [string, (req: IncomingMessage & { body?: unknown; rawBody?: unknown }, raw: Buffer) => void, number][] = [
      ['a Buffer in req.body', (req, raw) => void (req.body = raw), 200],
      [
        'bytes in req.rawBody beside a parsed req.body',
        (req, raw) => Object.assign(req, { rawBody: raw, body: JSON.parse(raw.toString()) }),
        200,
      ],
      ['text in req.rawBody', (req, raw) => void (req.rawBody = raw.toString('utf8')), 200],
      ['text in req.rawBody over the limit', (req, raw) => void (req.rawBody = raw.toString('utf8') + ' '.repeat(2_000)), 413],
      [
        'a parsed object in req.rawBody',
        (req, raw) => Object.assign(req, { rawBody: JSON.parse(raw.toString()), body: JSON.parse(raw.toString()) }),
        500,
      ],
    ];
    for (const [name, keep, status] of cases) {
      const { receiver, runs } = setup({ maxBodyBytes: 2_000 });
      const port = await serve(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        keep(req, Buffer.concat(chunks));
        writeNodeResponse(res, await processNodeRequest(receiver, req));
      });
      const answer = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body });
      expect(answer.status, name).toBe(status);
      expect(runs, name).toHaveLength(status === 200 ? 1 : 0);
    }
  });

  it('names the other known signature header only when the configured one is absent', async () => {
    const { receiver, reports } = setup();
    const port = await serve(toNodeListener(receiver));
    const { body, headers } = signedBody(createEvent('payment.success'), { secret });
    const both = { ...headers, 'x-epay-signature': headers['x-service-signature']! };
    expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: both, body })).status).toBe(200);
    expect(reports[0]).not.toHaveProperty('signatureHeaderSeen');
  });
});

describe('intake, whatever an adapter hands over', () => {
  const body = JSON.stringify(createEvent('payment.success'));

  it.each([
    ['text within the limit', body, 200],
    ['text of exactly the limit', body + ' '.repeat(1_000 - Buffer.byteLength(body)), 200],
    ['text one byte over', body + ' '.repeat(1_001 - Buffer.byteLength(body)), 413],
    // Fewer characters than the limit, more bytes: counted in UTF-8, as signed.
    ['two-byte text over the limit in bytes only', body.replace('}', `,"note":"${'é'.repeat(400)}"}`), 413],
  ])('counts %s in UTF-8 bytes', async (_, text, status) => {
    const { receiver } = setup({ maxBodyBytes: 1_000 });
    const r = await adapterOf(receiver).process({ method: 'POST', signature: sign(text, secret), body: text });
    expect(r.status).toBe(status);
  });

  it('answers a parsed object 500 body-unavailable, an upload that broke off 400, and a lower-case post like POST', async () => {
    const { receiver, reports } = setup();
    const { process } = adapterOf(receiver);
    const parsed = JSON.parse(body) as unknown as string;
    expect((await process({ method: 'POST', signature: sign(body, secret), body: parsed })).status).toBe(500);
    expect(
      (await process({ method: 'POST', signature: sign(body, secret), problem: 'unreadable', error: new Error('aborted') })).status,
    ).toBe(400);
    expect((await process({ method: 'post', signature: sign(body, secret), body })).status).toBe(200);
    expect(reports.map((r) => r.outcome)).toEqual(['body-unavailable', 'malformed', 'processed']);
  });
});

describe('readBodyLimited, on web requests', () => {
  const never = () => new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
  const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
    new Request('http://localhost/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

  it('refuses a declared length over the limit before reading, with or without a deadline', async () => {
    const clock = manualClock(0);
    expect(await readBodyLimited(post(never(), { 'content-length': '11' }), 10)).toBe('too-large');
    expect(await readBodyLimited(post(never(), { 'content-length': '11' }), 10, { ms: 1_000, clock })).toBe('too-large');
    expect(clock.pending()).toBe(0);
  });

  it('reads a body without a deadline, whole and in order', async () => {
    expect(await readBodyLimited(post('abc'), 10)).toEqual(new TextEncoder().encode('abc'));
    expect(await readBodyLimited(post('abcdefghij'), 10)).toEqual(new TextEncoder().encode('abcdefghij'));
    expect(await readBodyLimited(post('abcdefghijk'), 10)).toBe('too-large');
  });

  it('reads no body as empty, and leaves no timer behind once a body is read', async () => {
    const clock = manualClock(0);
    expect(await readBodyLimited(post(null), 10, { ms: 1_000, clock })).toEqual(new Uint8Array(0));
    const parts = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array([1, 2]));
        c.enqueue(new Uint8Array([3]));
        c.close();
      },
    });
    expect(await readBodyLimited(post(parts), 10, { ms: 1_000, clock })).toEqual(new Uint8Array([1, 2, 3]));
    expect(clock.pending()).toBe(0);
  });
});
