import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { Receiver } from '@payhook/core';

/**
 * The webhook route for Hono 4: hands the untouched request to the receiver. Mount it before
 * any validator or middleware that reads the body; if one did (`c.req.json()` first), the answer
 * is 500 and the logged error says so, rather than a signature check on re-serialised JSON.
 *
 * On Node with `@hono/node-server` it reads the Node request (`c.env.incoming`) through the core's
 * Node bridge: building a web `Request` stream costs more than the whole pipeline (BENCHMARKS.md,
 * HTTP). Elsewhere (Bun, Deno, workers) it passes `c.req.raw`.
 *
 * @example
 * const app = new Hono();
 * app.all('/webhooks', payhookHono(receiver)); // other methods get 405
 * export default app;
 */
export function payhookHono(receiver: Receiver): (c: Context) => Promise<Response> {
  return async (c) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming || typeof incoming.on !== 'function' || c.req.raw.bodyUsed) {
      return receiver.handle(c.req.raw, { framework: 'hono' });
    }
    // Loaded only on Node, so the adapter still runs where node: modules do not exist.
    const { lingerOnClose, processNodeRequest } = await import('@payhook/core/node');
    const result = await processNodeRequest(receiver, incoming, { framework: 'hono' });
    const outgoing = (c.env as { outgoing?: ServerResponse }).outgoing;
    if (result.headers.connection === 'close' && outgoing) lingerOnClose(outgoing);
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}
