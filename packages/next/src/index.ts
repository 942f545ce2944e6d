/**
 * `@payhook/next`: the Next.js adapter for `@payhook/core`: App Router route handlers and Pages Router API routes.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver } from '@payhook/core';
import { nodeBridge } from '@payhook/core/adapter';
import * as nextServer from 'next/server.js';

/** A web-standard route handler, as the App Router calls it. */
export type PayhookRouteHandler = (request: Request) => Promise<Response>;

/**
 * A receiver, or a function that makes one on the first request: `next build` loads route
 * modules, and a receiver made at load time needs its secret in the build's environment.
 */
export type ReceiverSource = Receiver | (() => Receiver);

const lazily = (source: ReceiverSource): (() => Receiver) => {
  if (typeof source !== 'function') return () => source;
  let made: Receiver | undefined;
  return () => (made ??= source());
};

// `after` arrived in Next 15.1; on older versions a handler past the budget runs on in the server process.
const after = (nextServer as { after?: (work: Promise<unknown>) => void }).after;

/**
 * App Router route handlers for `app/.../route.ts`, on the Node and the Edge runtime. A handler
 * still running at the budget is kept alive with Next's `after()` where Next has it (15.1+), so a
 * serverless function is not frozen under it. Export `GET` too if other methods should get 405
 * from payhook rather than from Next.
 *
 * @example
 * // app/api/webhooks/route.ts
 * export const { POST, GET } = payhookNext(() =>
 *   createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! }).on('payment.success', markPaid),
 * );
 */
export function payhookNext(receiver: ReceiverSource): Record<'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE', PayhookRouteHandler> {
  const receiverOf = lazily(receiver);
  const handler: PayhookRouteHandler = (request) => receiverOf().handle(request, { framework: 'next', waitUntil: after });
  return { POST: handler, GET: handler, PUT: handler, PATCH: handler, DELETE: handler };
}

/** A Pages Router API route, typed on Node's objects (`NextApiRequest` and `NextApiResponse` extend them). */
export type PayhookPagesHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * A Pages Router API route (Node runtime only). Turn Next's body parser off for it: Next reads
 * the config statically, so it must be written out in the route file. With the parser on, the
 * body is gone and payhook answers 500 with an error that says so.
 *
 * @example
 * // pages/api/webhooks.ts
 * export const config = { api: { bodyParser: false } };
 * export default payhookPages(() => createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! }));
 */
export function payhookPages(receiver: ReceiverSource): PayhookPagesHandler {
  const receiverOf = lazily(receiver);
  return async (req, res) => {
    if (!nodeBridge) {
      throw new Error(
        '[@payhook/next] payhookPages runs on the Node runtime only; on the Edge runtime use payhookNext in an App Router route.',
      );
    }
    nodeBridge.writeNodeResponse(res, await nodeBridge.processNodeRequest(receiverOf(), req, { framework: 'next' }));
  };
}
