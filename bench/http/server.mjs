// One benchmark server: `node bench/http/server.mjs <express|fastify|hono>` listens on
// 127.0.0.1:0 and prints `{"port":N}` on stdout once ready. Two routes on the same app:
//   POST /floor     the hand-written route: raw body, createHmac + timingSafeEqual, JSON.parse, 200
//   POST /webhooks  the payhook adapter of the same framework, memory store with a small max
//   GET  /stats     handler runs per route (so the bench can check every delivery ran its handler)
// Next is served by `next start` of bench/next-app instead (same three routes under /api).
import http from 'node:http';
import { createReceiver, memoryStore } from '@payhook/core';
import { SECRET, SIGNATURE_HEADER, STORE_MAX, counts, floorVerify, handle } from './shared.mjs';

const framework = process.argv[2];
// Exit cleanly on SIGTERM, so `--cpu-prof` (BENCH_HTTP_PROFILE=1) writes its profile.
process.on('SIGTERM', () => process.exit(0));
// Warnings (the bench's one deliberately bad signature) stay quiet; errors still print.
const receiver = createReceiver({ secret: SECRET, store: memoryStore({ max: STORE_MAX }), logger: { warn() {} } }).onAny((event) => {
  handle('payhook', event);
});
const OK = '{"outcome":"processed"}';
const JSON_TYPE = { 'content-type': 'application/json' };

function ready(port) {
  process.stdout.write(`${JSON.stringify({ port, pid: process.pid })}\n`);
}

if (framework === 'express') {
  const { default: express } = await import('express');
  const { payhookExpress } = await import('@payhook/express');
  const app = express();
  app.set('etag', false);
  app.set('x-powered-by', false);
  // The floor as Stripe's docs write it for Express: express.raw keeps the bytes.
  app.post('/floor', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
    const event = floorVerify(req.body, req.headers[SIGNATURE_HEADER]);
    if (!event) return void res.writeHead(401, JSON_TYPE).end('{"outcome":"unauthorized"}');
    handle('floor', event);
    res.writeHead(200, JSON_TYPE).end(OK);
  });
  app.all('/webhooks', payhookExpress(receiver));
  app.get('/stats', (_req, res) => void res.json(counts));
  const server = http.createServer(app);
  server.listen(0, '127.0.0.1', () => ready(server.address().port));
} else if (framework === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const { payhookFastify } = await import('@payhook/fastify');
  const app = Fastify({ logger: false });
  // The floor: an encapsulated route whose JSON parser keeps the raw bytes.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    scope.post('/floor', async (request, reply) => {
      const event = floorVerify(request.body, request.headers[SIGNATURE_HEADER]);
      if (!event) return reply.code(401).header('content-type', 'application/json').send('{"outcome":"unauthorized"}');
      handle('floor', event);
      return reply.code(200).header('content-type', 'application/json').send(OK);
    });
  });
  await app.register(payhookFastify, { receiver, path: '/webhooks' });
  app.get('/stats', async () => counts);
  await app.listen({ port: 0, host: '127.0.0.1' });
  ready(app.server.address().port);
} else if (framework === 'hono') {
  const { Hono } = await import('hono');
  const { serve } = await import('@hono/node-server');
  const { payhookHono } = await import('@payhook/hono');
  const app = new Hono();
  app.post('/floor', async (c) => {
    const raw = Buffer.from(await c.req.arrayBuffer());
    const event = floorVerify(raw, c.req.header(SIGNATURE_HEADER));
    if (!event) return c.body('{"outcome":"unauthorized"}', 401, JSON_TYPE);
    handle('floor', event);
    return c.body(OK, 200, JSON_TYPE);
  });
  app.all('/webhooks', payhookHono(receiver));
  app.get('/stats', (c) => c.json(counts));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(info.port));
  void server;
} else {
  console.error(`usage: node bench/http/server.mjs <express|fastify|hono>; got ${framework}`);
  process.exit(2);
}
