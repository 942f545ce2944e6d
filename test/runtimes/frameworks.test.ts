import http from 'node:http';
import { getRequestListener as nodeServer2 } from '@hono/node-server';
import { getRequestListener as nodeServer1 } from '@hono/node-server-1';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { Hono as Hono4Newest } from 'hono';
import { Hono as Hono4Lowest } from 'hono-4.0';
import { createEvent, signedBody } from '@payhook/testing';
import { payhookExpress, type PayhookExpressRequest } from '@payhook/express';
import { payhookFastify } from '@payhook/fastify';
import { payhookHono } from '@payhook/hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, send, type Served } from '../adapters/http.js';
import { expectCoreCases } from './cases.js';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET, matrixReceiver, runsAnswer } from './app/matrix-app.mjs';

type MatrixApp = { receiver: import('@payhook/core').Receiver; runs: Map<string, unknown> };
const origin = (served: Served) => served.url.replace(/\/webhooks$/, '');
const toUrl = (path: string) => new URL(path, 'http://127.0.0.1');

/** Each peer range's lowest and newest version (package.json pins them; the README's table names them). */
const EXPRESS = [
  ['express 4.18.0', express4],
  ['express 5.3.0', express5],
] as const;
const FASTIFY = [
  ['fastify 4.0.0', fastify4 as unknown as typeof fastify5],
  ['fastify 5.12.8', fastify5],
] as const;
const HONO = [
  ['hono 4.0.0 on @hono/node-server 1.19.19', Hono4Lowest as unknown as typeof Hono4Newest, nodeServer1 as unknown as typeof nodeServer2],
  ['hono 4.13.19 on @hono/node-server 2.1.8', Hono4Newest, nodeServer2],
] as const;

for (const [name, express] of EXPRESS) {
  describe(`${name}, with express.json({ verify }) mounted app-wide as its docs show`, () => {
    const app: MatrixApp = matrixReceiver();
    let served: Served;
    beforeAll(async () => {
      const web = express();
      web.use(express.json({ verify: (req: PayhookExpressRequest, _res: unknown, buf: Buffer) => void (req.rawBody = buf) }));
      web.all('/webhooks', payhookExpress(app.receiver));
      web.post('/raw/webhooks', express.raw({ type: 'application/json' }), payhookExpress(app.receiver));
      web.get('/runs', async (req, res) => void res.type('json').send(await (await runsAnswer(app, toUrl(req.url))).text()));
      served = await listen(http.createServer(web), '/webhooks');
    });
    afterAll(() => served.close());

    it('answers the core cases', () => expectCoreCases({ webhooks: served.url, runs: `${origin(served)}/runs` }));

    it('answers 200 to a delivery the JSON parser skipped (Content-Type text/plain): the stream was never read', async () => {
      const { body, headers } = signedBody(createEvent('payment.success'), { secret: MATRIX_SECRET });
      const res = await send(served.url, { headers: { ...headers, 'content-type': 'text/plain' }, body: body as string });
      expect([res.status, res.text]).toEqual([200, '{"outcome":"processed"}']);
    });

    it('answers 200 behind express.raw(), which keeps the exact bytes in req.body', async () => {
      const { body, headers } = signedBody(createEvent('payment.success'), { secret: MATRIX_SECRET });
      const res = await send(`${origin(served)}/raw/webhooks`, { headers, body: body as string });
      expect([res.status, res.text]).toEqual([200, '{"outcome":"processed"}']);
    });
  });
}

for (const [name, Fastify] of FASTIFY) {
  describe(name, () => {
    const app: MatrixApp = matrixReceiver();
    let close: () => Promise<void>;
    let address: string;
    beforeAll(async () => {
      const web = Fastify();
      web.get('/runs', async (request, reply) =>
        reply.type('application/json').send(await (await runsAnswer(app, toUrl(request.url))).text()),
      );
      await web.register(payhookFastify, { receiver: app.receiver });
      address = await web.listen({ port: 0, host: '127.0.0.1' });
      close = () => web.close();
    });
    afterAll(() => close());

    it('answers the core cases', () => expectCoreCases({ webhooks: `${address}/webhooks`, runs: `${address}/runs` }));
  });
}

for (const [name, Hono, getRequestListener] of HONO) {
  describe(name, () => {
    const app: MatrixApp = matrixReceiver();
    let built = 0;
    let served: Served;
    beforeAll(async () => {
      const web = new Hono();
      // The function form: node-server passes a new env ({ incoming, outgoing }) per request, yet one receiver is built.
      web.all(
        '/webhooks',
        payhookHono(() => (built++, app.receiver)),
      );
      web.get('/runs', (c) => runsAnswer(app, new URL(c.req.url)));
      served = await listen(http.createServer(getRequestListener(web.fetch)), '/webhooks');
    });
    afterAll(() => served.close());

    it('answers the core cases, from one receiver built on the first request', async () => {
      await expectCoreCases({ webhooks: served.url, runs: `${origin(served)}/runs` });
      expect(built).toBe(1);
    });

    it('answers a 500 KB signed body within a second, never a hang', async () => {
      const event = { ...createEvent('payment.success'), note: 'x'.repeat(500 * 1024) };
      const { body, headers } = signedBody(event, { secret: MATRIX_SECRET });
      const res = await send(served.url, { headers, body: body as string, timeoutMs: 1_000 });
      expect([200, 413]).toContain(res.status);
      expect(res.ms).toBeLessThan(1_000);
    });
  });
}
