/**
 * The web process: checks each delivery's signature, drops copies, puts the event on the queue and
 * answers 200 {"outcome":"queued"}. It runs no handler; the workers do (src/worker.ts).
 *
 *   PAYHOOK_WEBHOOK_SECRET  required
 *   PORT, HOST              default 3000 on 127.0.0.1
 *   and the queue's settings (src/setup.ts)
 *
 *   POST /webhooks       the receiver
 *   POST /orders         {"id": "order-1", "amount": "250.00"}: a pending order to pay
 *   GET  /orders/:id     the order, and the payments the workers recorded against it
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { createReceiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { closeOnSignal, connectQueue, createTables, logLines, ORDERS, PAYMENTS, pool, queue, store } from './setup.js';

const secret = process.env.PAYHOOK_WEBHOOK_SECRET;
if (!secret) throw new Error('[queue example] set PAYHOOK_WEBHOOK_SECRET (the webhook secret of your account)');

// With a handoff the receiver takes no handlers: they are registered on the workers.
const receiver = createReceiver({ secret, store, handoff: queue.queue, logger: logLines('web') });
const webhooks = toNodeListener(receiver);

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 16_384) throw new Error('body too large');
  }
  return JSON.parse(body);
}

async function createOrder(req: IncomingMessage, res: ServerResponse) {
  const input = (await readJson(req).catch(() => undefined)) as { id?: unknown; amount?: unknown } | undefined;
  if (typeof input?.id !== 'string' || input.id === '' || typeof input.amount !== 'string' || !/^\d{1,9}\.\d{2}$/.test(input.amount)) {
    return json(res, 400, { error: 'send {"id": "<order id>", "amount": "250.00"}' });
  }
  const { rowCount } = await pool.query(`insert into ${ORDERS} (id, amount) values ($1, $2) on conflict (id) do nothing`, [
    input.id,
    input.amount,
  ]);
  return rowCount === 1
    ? json(res, 201, { id: input.id, amount: input.amount, status: 'pending' })
    : json(res, 409, { error: `order ${input.id} exists` });
}

async function showOrder(id: string, res: ServerResponse) {
  const order = await pool.query(
    `select id, amount::text, status, payment_reference as "paymentReference", paid_at as "paidAt" from ${ORDERS} where id = $1`,
    [id],
  );
  if (order.rowCount === 0) return json(res, 404, { error: `no order ${id}` });
  const payments = await pool.query(
    `select reference, amount::text, job_id as "jobId", attempt from ${PAYMENTS} where order_id = $1 order by id`,
    [id],
  );
  return json(res, 200, { ...order.rows[0], payments: payments.rows });
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  if (pathname === '/webhooks') return webhooks(req, res);
  if (pathname === '/orders' && req.method === 'POST') return createOrder(req, res);
  const match = /^\/orders\/([^/]+)$/.exec(pathname);
  if (match && req.method === 'GET') return showOrder(decodeURIComponent(match[1]!), res);
  return json(res, 404, { error: 'not found' });
}

const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
  route(req, res).catch((error: unknown) => {
    console.error('[queue:web]', error);
    if (!res.headersSent) json(res, 500, { error: 'internal error' });
  });
});
// A client that trickles its headers or body is cut off; the service's own deliveries fit easily.
server.headersTimeout = 10_000;
server.requestTimeout = 15_000;
server.keepAliveTimeout = 5_000;
closeOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));

await createTables();
await connectQueue();

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => {
  const bound = server.address();
  const at = typeof bound === 'object' && bound ? bound.port : port;
  console.log(`[queue:web] listening on http://${host}:${at} (${queue.engine}, queue ${queue.queue.name})`);
});
