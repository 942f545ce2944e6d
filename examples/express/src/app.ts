import { nodeBoard } from '@payhook/board/node';
import type { Shop } from '@payhook/example-shop';
import { payhookExpress } from '@payhook/express';
import express, { type Express } from 'express';

/**
 * The shop on Express: the webhook route first, so it reads the raw body before express.json(),
 * then the board at /admin/payments (it reads its own forms, or takes what express.urlencoded() parsed).
 */
export function createApp(shop: Shop): Express {
  const app = express();
  app.all('/webhooks', payhookExpress(shop.receiver));
  app.use(shop.board.basePath, nodeBoard(shop.board));
  app.use(express.json());
  app.post('/checkout', async (req, res) => {
    const { status, body } = await shop.checkout(req.body);
    res.status(status).json(body);
  });
  app.get('/orders/:merchantReference', (req, res) => {
    const { status, body } = shop.order(req.params.merchantReference);
    res.status(status).json(body);
  });
  return app;
}
