import type { Context } from 'hono';
import type { Receiver } from '@payhook/core';

/**
 * The webhook route for Hono 4: hands the untouched `c.req.raw` to the receiver. Mount it before
 * any validator or middleware that reads the body; if one did (`c.req.json()` first), the answer
 * is 500 and the logged error says so, rather than a signature check on re-serialised JSON.
 *
 * @example
 * const app = new Hono();
 * app.all('/webhooks', payhookHono(receiver)); // other methods get 405
 * export default app;
 */
export function payhookHono(receiver: Receiver): (c: Context) => Promise<Response> {
  return (c) => receiver.handle(c.req.raw, { framework: 'hono' });
}
