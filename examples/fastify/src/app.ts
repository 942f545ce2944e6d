import { fastifyBoard } from '@payhook/board/node';
import type { Shop } from '@payhook/example-shop';
import { payhookFastify } from '@payhook/fastify';
import { SERVER_TIMEOUTS } from '@payhook/example-shop/listen';
import Fastify from 'fastify';

/**
 * The shop on Fastify: the payhook plugin and the board (at /admin/payments) each have their own
 * body parsers; the rest of the app parses JSON as usual.
 */
export async function createApp(shop: Shop) {
  const app = Fastify({
    connectionTimeout: SERVER_TIMEOUTS.headersTimeoutMs,
    requestTimeout: SERVER_TIMEOUTS.requestTimeoutMs,
    keepAliveTimeout: SERVER_TIMEOUTS.keepAliveTimeoutMs,
    // Fastify has no option of its own for these: Node's server takes them (default 60 s headers, checked every 30 s).
    http: { headersTimeout: SERVER_TIMEOUTS.headersTimeoutMs, connectionsCheckingInterval: SERVER_TIMEOUTS.checkIntervalMs },
  });
  await app.register(payhookFastify, { receiver: shop.receiver, path: '/webhooks' });
  await app.register(fastifyBoard(shop.board));
  app.post('/checkout', async (req, reply) => {
    const { status, body } = await shop.checkout(req.body);
    return reply.code(status).send(body);
  });
  app.get<{ Params: { merchantReference: string } }>('/orders/:merchantReference', async (req, reply) => {
    const { status, body } = shop.order(req.params.merchantReference);
    return reply.code(status).send(body);
  });
  await app.ready();
  return app;
}
