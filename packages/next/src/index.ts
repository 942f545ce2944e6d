import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver } from '@payhook/core';
import { processNodeRequest, writeNodeResponse } from '@payhook/core/node';

/** A web-standard route handler, as the App Router calls it. */
export type PayhookRouteHandler = (request: Request) => Promise<Response>;

/**
 * App Router route handlers for `app/.../route.ts`. Export `GET` too if other methods should get
 * 405 from payhook rather than from Next.
 *
 * @example
 * // app/api/webhooks/route.ts
 * import { receiver } from '@/lib/receiver';
 * export const { POST, GET } = payhookNext(receiver);
 */
export function payhookNext(receiver: Receiver): Record<'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE', PayhookRouteHandler> {
  const handler: PayhookRouteHandler = (request) => receiver.handle(request, { framework: 'next' });
  return { POST: handler, GET: handler, PUT: handler, PATCH: handler, DELETE: handler };
}

/** A Pages Router API route, typed on Node's objects (`NextApiRequest` and `NextApiResponse` extend them). */
export type PayhookPagesHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * A Pages Router API route. Turn Next's body parser off for it: Next reads the config
 * statically, so it must be written out in the route file. With the parser on, the body is gone
 * and payhook answers 500 with an error that says so.
 *
 * @example
 * // pages/api/webhooks.ts
 * export const config = { api: { bodyParser: false } };
 * export default payhookPages(receiver);
 */
export function payhookPages(receiver: Receiver): PayhookPagesHandler {
  return async (req, res) => writeNodeResponse(res, await processNodeRequest(receiver, req, { framework: 'next' }));
}
