import type { Shop } from '@payhook/example-shop';
import { payhookHono } from '@payhook/hono';
import { Hono } from 'hono';

/** The shop on Hono: the webhook route and the board (at /admin/payments) each get the untouched request. */
export function createApp(shop: Shop) {
  const app = new Hono();
  app.all('/webhooks', payhookHono(shop.receiver));
  app.all('/admin/payments', (c) => shop.board.fetch(c.req.raw));
  app.all('/admin/payments/*', (c) => shop.board.fetch(c.req.raw));
  app.post('/checkout', async (c) => {
    const { status, body } = await shop.checkout(await c.req.json().catch(() => ({})));
    return c.json(body as object, status as 200);
  });
  app.get('/orders/:merchantReference', (c) => {
    const { status, body } = shop.order(c.req.param('merchantReference'));
    return c.json(body as object, status as 200);
  });
  return app;
}
