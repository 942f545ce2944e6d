import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { payhookExpress } from '@payhook/express';
import { payhookFastify } from '@payhook/fastify';
import { payhookHono } from '@payhook/hono';
import { createEvent, signedBody } from '@payhook/testing';

/**
 * Senders that never finish, on every adapter with the frameworks' default server settings: an
 * upload far over the limit gets a 413 the client reads (no reset), with or without
 * Content-Length, and a body that trickles on forever is answered 408 once `bodyTimeoutMs` has
 * passed and its connection closed, while an honest delivery on another connection is answered.
 */
const SECRET = 'whsec_bounded';
const BODY_TIMEOUT_MS = 300;
const FIFTY_MB = 50 * 1024 * 1024;

interface Target {
  url: string;
  close(): Promise<void>;
}

const listenNode = (server: http.Server): Promise<Target> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/webhooks`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );

const fastifyTarget = async (Fastify: typeof fastify5, receiver: Receiver): Promise<Target> => {
  const app = Fastify();
  await app.register(payhookFastify, { receiver });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${address}/webhooks`, close: () => app.close() };
};

const TARGETS: Record<string, (receiver: Receiver) => Promise<Target>> = {
  'node:http': (receiver) => listenNode(http.createServer(toNodeListener(receiver))),
  'express 5': (receiver) => listenNode(http.createServer(express5().all('/webhooks', payhookExpress(receiver)))),
  'express 4': (receiver) => listenNode(http.createServer(express4().all('/webhooks', payhookExpress(receiver)))),
  'fastify 5': (receiver) => fastifyTarget(fastify5, receiver),
  'fastify 4': (receiver) => fastifyTarget(fastify4 as unknown as typeof fastify5, receiver),
  'hono on @hono/node-server': (receiver) =>
    new Promise((resolve) => {
      const server = serve({ fetch: new Hono().all('/webhooks', payhookHono(receiver)).fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
        resolve({ url: `http://127.0.0.1:${info.port}/webhooks`, close: () => new Promise((r) => server.close(() => r())) }),
      );
    }),
};

interface Upload {
  /** The status the client read, if any. */
  status?: number;
  /** An error the client saw before it had an answer (a reset, an EPIPE). */
  errorBeforeAnswer?: string;
  answeredMs?: number;
  closedMs?: number;
}

const HEAD = (url: string, framing: string) =>
  `POST ${new URL(url).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Service-Signature: sha256=${'0'.repeat(64)}\r\n${framing}\r\n`;

/**
 * A plain client that sends its whole body before it reads anything, as simple senders do:
 * 50 MB, chunked or with Content-Length. A server that closes the connection while bytes are
 * still coming resets it, and this client then never reads the answer.
 */
function uploadAll(url: string, contentLength: boolean): Promise<Upload> {
  const { port } = new URL(url);
  const result: Upload = {};
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.pause();
    let text = '';
    const settle = () => resolve(result);
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (result.status === undefined) result.errorBeforeAnswer = e.code ?? e.message;
      settle();
    });
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (status) {
        result.status = Number(status[1]);
        socket.destroy();
        settle();
      }
    });
    socket.on('close', settle);
    socket.on('connect', async () => {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const frame = contentLength ? chunk : Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      socket.write(HEAD(url, contentLength ? `Content-Length: ${FIFTY_MB}\r\n` : 'Transfer-Encoding: chunked\r\n'));
      for (let sent = 0; sent < FIFTY_MB && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r).once('close', r));
      }
      if (!contentLength && !socket.destroyed) socket.write('0\r\n\r\n');
      // Only now read the answer.
      socket.resume();
    });
  });
}

/** POST a body that trickles one byte every `trickleMs`, forever; resolves once the server closed the connection. */
function uploadEndless(url: string, trickleMs = 50): Promise<Upload> {
  const started = performance.now();
  const result: Upload = {};
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json', 'x-service-signature': `sha256=${'0'.repeat(64)}` };
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      result.status = res.statusCode;
      result.answeredMs = performance.now() - started;
      res.resume();
    });
    const timer = setInterval(() => req.write(' '), trickleMs);
    const done = () => {
      clearInterval(timer);
      result.closedMs ??= performance.now() - started;
      resolve(result);
    };
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (result.status === undefined) result.errorBeforeAnswer = e.code ?? e.message;
      done();
    });
    req.on('close', done);
    req.write('{');
  });
}

async function honest(url: string): Promise<number> {
  const { body, headers } = signedBody(createEvent('payment.success'), { secret: SECRET });
  const res = await fetch(url, { method: 'POST', headers, body: body as BodyInit });
  return res.status;
}

for (const [name, make] of Object.entries(TARGETS)) {
  describe(`bounded senders on ${name}`, () => {
    let target: Target;
    let handled = 0;
    beforeAll(async () => {
      const receiver = createReceiver({ secret: SECRET, bodyTimeoutMs: BODY_TIMEOUT_MS, logger: { warn() {}, error() {} } }).onAny(() => {
        handled += 1;
      });
      target = await make(receiver);
    });
    afterAll(() => target.close());

    it.each([
      ['chunked, without Content-Length', false],
      ['with Content-Length', true],
    ])('answers a 50 MB upload, %s, with a 413 the client reads', async (_, contentLength) => {
      const result = await uploadAll(target.url, contentLength);
      expect(result).toMatchObject({ status: 413 });
      expect(result.errorBeforeAnswer).toBeUndefined();
    });

    it('answers a body that never ends 408 once bodyTimeoutMs has passed, closes it, and goes on answering honest deliveries', async () => {
      const before = handled;
      const [endless, status] = await Promise.all([uploadEndless(target.url), honest(target.url)]);
      expect(status).toBe(200);
      expect(handled).toBe(before + 1);
      expect(endless.status).toBe(408);
      expect(endless.answeredMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 20);
      // The answer comes at the deadline; the connection closes once the linger for the client to read it is over.
      expect(endless.answeredMs).toBeLessThan(BODY_TIMEOUT_MS + 1_000);
      expect(endless.closedMs).toBeLessThan(BODY_TIMEOUT_MS + 3_000);
    });
  });
}
