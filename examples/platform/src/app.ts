import { nodeBoard } from '@payhook/board/node';
import { payhookExpress } from '@payhook/express';
import express, { type Express, type Request as ExpressRequest } from 'express';
import type { Platform } from './platform.js';

/** Express's request as a web Request's headers, for the platform's staff check. */
const asRequest = (req: ExpressRequest) =>
  new Request('http://platform.local/', { headers: { authorization: req.get('authorization') ?? '' } });

/**
 * The platform on Express: one webhook route for every merchant account (the account in the
 * path, read before express.json()), the board at /admin/payments scoped by who signs in, each
 * account's checkout and orders, and the rotation of an account's webhook secret.
 */
export function createApp(platform: Platform): Express {
  const app = express();
  app.post('/webhooks/epay/:account', payhookExpress(platform.receiver));
  app.use(platform.board.basePath, nodeBoard(platform.board));
  app.use(express.json());
  app.post('/accounts/:account/checkout', async (req, res) => {
    const { status, body } = await platform.checkout(req.params.account, req.body);
    res.status(status).json(body);
  });
  app.get('/accounts/:account/orders/:merchantReference', (req, res) => {
    const { status, body } = platform.order(req.params.account, req.params.merchantReference);
    res.status(status).json(body);
  });
  app.post('/admin/accounts/:account/rotate', (req, res) => {
    if (!platform.isPlatformStaff(asRequest(req))) return void res.status(401).json({ error: 'platform staff only' });
    const { status, body } = platform.rotate(req.params.account, (req.body as { webhookSecret?: unknown } | undefined)?.webhookSecret);
    res.status(status).json(body);
  });
  app.post('/admin/accounts/:account/rotate/finish', (req, res) => {
    if (!platform.isPlatformStaff(asRequest(req))) return void res.status(401).json({ error: 'platform staff only' });
    const { status, body } = platform.finishRotation(req.params.account);
    res.status(status).json(body);
  });
  return app;
}
