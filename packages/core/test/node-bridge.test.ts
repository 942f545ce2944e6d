import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedBody } from '@payhook/testing';
import { createReceiver, type DeliveryReport } from '../src/index.js';
import { processNodeRequest, toNodeListener, writeNodeResponse } from '../src/node-bridge/node-bridge.js';
import { until } from '@payhook/test-support/wait';

const secret = 'whsec_node_bridge';
const servers: http.Server[] = [];

function serve(listener: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = http.createServer(listener);
  servers.push(server);
  return new Promise<{ server: http.Server; port: number }>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  );
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function setup(maxBodyBytes?: number) {
  // Logged fields: the report, its error under `err`.
  const reports: (DeliveryReport & { err?: unknown })[] = [];
  const receiver = createReceiver({ secret, maxBodyBytes, logger: (_level, fields) => void reports.push(fields as DeliveryReport) });
  const runs: string[] = [];
  receiver.on('payment.success', (e) => void runs.push(e.reference));
  return { receiver, runs, reports };
}

/** Send raw chunks with chunked transfer encoding (no Content-Length) and read the status. */
function sendChunked(port: number, chunks: Buffer[], headers: Record<string, string>) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks', headers }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', (e) =>
      (e as NodeJS.ErrnoException).code === 'EPIPE' || (e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e),
    );
    let i = 0;
    const next = () => {
      if (i === chunks.length) return req.end();
      req.write(chunks[i++], () => setImmediate(next));
    };
    next();
  });
}

describe('the Node bridge', () => {
  it('runs a delivery over a real socket, then answers the same bytes as a duplicate', async () => {
    const { receiver, runs } = setup();
    const { server } = await serve(toNodeListener(receiver));
    const event = createEvent('payment.success');
    const { body, headers } = signedBody(event, { secret });
    const first = await request(server).post('/webhooks').set(headers).send(body);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ outcome: 'processed' });
    const again = await request(server).post('/webhooks').set(headers).send(body);
    expect(again.body).toEqual({ outcome: 'duplicate' });
    expect(runs).toEqual([event.reference]);
  });

  it('answers 401 to a bad signature and 405 to GET', async () => {
    const { receiver, runs } = setup();
    const { server } = await serve(toNodeListener(receiver));
    const { body } = signedBody(createEvent('payment.success'), { secret });
    const bad = await request(server)
      .post('/webhooks')
      .set('x-service-signature', 'sha256=' + 'a'.repeat(64))
      .send(body);
    expect(bad.status).toBe(401);
    const get = await request(server).get('/webhooks');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(runs).toHaveLength(0);
  });

  it('answers 413 to a declared Content-Length over the limit', async () => {
    const { receiver } = setup(1_000);
    const { server } = await serve(toNodeListener(receiver));
    const big = JSON.stringify({ ...createEvent('payment.success'), pad: 'x'.repeat(5_000) });
    const res = await request(server).post('/webhooks').set(signedBody(big, { secret }).headers).send(big);
    expect(res.status).toBe(413);
  });

  it('answers 413 to a chunked body without Content-Length, counting the bytes', async () => {
    const { receiver, runs } = setup(1_000);
    const { port } = await serve(toNodeListener(receiver));
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(200, 0x20));
    const status = await sendChunked(port, chunks, { 'x-service-signature': 'sha256=' + '0'.repeat(64) });
    expect(status).toBe(413);
    expect(runs).toHaveLength(0);
  });

  it('accepts a chunked body under the limit', async () => {
    const { receiver, runs } = setup();
    const { port } = await serve(toNodeListener(receiver));
    const { body, headers } = signedBody(createEvent('payment.success'), { secret });
    const bytes = Buffer.from(body);
    const status = await sendChunked(port, [bytes.subarray(0, 100), bytes.subarray(100)], headers);
    expect(status).toBe(200);
    expect(runs).toHaveLength(1);
  });

  it('answers 500 at once, naming the fix, when a parser already consumed the stream', async () => {
    const { receiver, reports, runs } = setup();
    const { server } = await serve(async (req, res) => {
      // What express.json() does: read the whole stream and set req.body.
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      (req as IncomingMessage & { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString());
      writeNodeResponse(res, await processNodeRequest(receiver, req, { framework: 'express' }));
    });
    const { body, headers } = signedBody(createEvent('payment.success'), { secret });
    const started = performance.now();
    const res = await request(server).post('/webhooks').set(headers).send(body);
    expect(res.status).toBe(500);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(res.text).not.toContain('express');
    expect(String(reports.at(-1)?.err)).toMatch(/\[@payhook\/express\] a body parser already parsed the request.*express\.json\(\{ verify/);
    expect(runs).toHaveLength(0);
  });

  it('answers 500 at once when the stream was drained without setting a body', async () => {
    const { receiver, reports } = setup();
    const { server } = await serve(async (req, res) => {
      for await (const _ of req) void _;
      writeNodeResponse(res, await processNodeRequest(receiver, req));
    });
    const { body, headers } = signedBody(createEvent('payment.success'), { secret });
    const res = await request(server).post('/webhooks').set(headers).send(body);
    expect(res.status).toBe(500);
    expect(String(reports.at(-1)?.err)).toMatch(/\[@payhook\/core\] the request stream was already read/);
  });

  it('verifies raw bytes that a framework kept, never the parsed body', async () => {
    const { receiver, runs } = setup();
    const { server } = await serve(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      (req as IncomingMessage & { body?: unknown }).body = JSON.parse(raw.toString());
      writeNodeResponse(res, await processNodeRequest(receiver, req, { body: raw }));
    });
    const { body, headers } = signedBody(JSON.stringify(createEvent('payment.success'), null, 2), { secret });
    const res = await request(server).post('/webhooks').set(headers).send(body);
    expect(res.status).toBe(200);
    expect(runs).toHaveLength(1);
  });
});

describe('a body that never ends', () => {
  it('is answered 408 with Connection: close at bodyTimeoutMs on the receiver clock, and the handler never runs', async () => {
    const clock = manualClock(0);
    const runs: string[] = [];
    const receiver = createReceiver({ secret, clock, bodyTimeoutMs: 5_000, logger: { warn() {}, error() {} } }).onAny(
      (e) => void runs.push(e.reference),
    );
    const { port } = await serve(toNodeListener(receiver));
    const timers = clock.pending();
    const answer = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode!, connection: res.headers.connection });
        },
      );
      req.on('error', reject);
      req.write('{'); // and nothing more
    });
    // Until the request has crossed the socket and the bridge is reading: its body deadline is set on the clock.
    await until(() => clock.pending() > timers, { what: "the bridge's body deadline on the receiver clock" });
    let answered = false;
    void answer.then(() => (answered = true));
    await clock.advance(4_999);
    expect(answered).toBe(false);
    await clock.advance(1);
    expect(await answer).toEqual({ status: 408, connection: 'close' });
    expect(runs).toEqual([]);
  });
});
