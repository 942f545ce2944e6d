/**
 * `@payhook/hono`: the Hono 4 adapter for `@payhook/core`, on the platforms Hono runs on.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { Receiver } from '@payhook/core';
import { nodeBridge } from '@payhook/core/adapter';

/** A receiver, or a function that builds one from the platform's bindings (a Worker's `env`). */
export type ReceiverSource<Env = unknown> = Receiver | ((env: Env) => Receiver);

/**
 * The webhook route for Hono 4: hands the untouched request to the receiver. Mount it before
 * any validator or middleware that reads the body; if one did (`c.req.json()` first), the answer
 * is 500 and the logged error says so, rather than a signature check on re-serialised JSON.
 *
 * On Cloudflare Workers, pass a function of `env` to read the secret from the Worker's bindings:
 * it is called once per environment and its receiver kept; a handler still running at the budget
 * is kept alive with `c.executionCtx.waitUntil`.
 *
 * On Node with `@hono/node-server` (1.x and 2.x) it reads the Node request (`c.env.incoming`)
 * through core's Node bridge and never touches `c.req.raw`: building a web `Request` stream costs
 * more than the whole pipeline (BENCHMARKS.md, HTTP), and on node-server 1.x a second reader on
 * the same stream left large bodies unanswered. Elsewhere (Bun, Deno, workers) it passes `c.req.raw`.
 *
 * @example
 * const app = new Hono<{ Bindings: { WEBHOOK_SECRET: string } }>();
 * app.all('/webhooks', payhookHono((env) => createReceiver({ secret: env.WEBHOOK_SECRET }).on(...)));
 * export default app;
 */
export function payhookHono<Env = unknown>(receiver: ReceiverSource<Env>): (c: Context) => Promise<Response> {
  const receiverFor = perEnvironment(receiver);
  return async (c) => {
    const env = c.env as Env & { incoming?: IncomingMessage; outgoing?: ServerResponse };
    const r = receiverFor(env);
    const incoming = env?.incoming;
    if (nodeBridge && incoming && typeof incoming.on === 'function') {
      const result = await nodeBridge.processNodeRequest(r, incoming, { framework: 'hono' });
      if (result.headers.connection === 'close' && env.outgoing) nodeBridge.lingerOnClose(env.outgoing);
      // A copy: the shared headers are frozen, and @hono/node-server 1.x's Response adds Content-Length to them.
      return new Response(result.body, { status: result.status, headers: { ...result.headers } });
    }
    return r.handle(c.req.raw, { framework: 'hono', waitUntil: waitUntilOf(c) });
  };
}

/**
 * One receiver per environment object (a Worker's `env` lives as long as its isolate). Node's
 * server passes a new `{ incoming, outgoing }` with every request, and Bun and Deno none: there,
 * one receiver for the process.
 */
function perEnvironment<Env>(source: ReceiverSource<Env>): (env: Env) => Receiver {
  if (typeof source !== 'function') return () => source;
  const built = new WeakMap<object, Receiver>();
  let single: Receiver | undefined;
  return (env) => {
    if (env === null || typeof env !== 'object' || 'incoming' in env) return (single ??= source(env));
    let r = built.get(env);
    if (r === undefined) built.set(env, (r = source(env)));
    return r;
  };
}

/** The Worker's `waitUntil`; Hono throws when asked for an execution context the platform has none of. */
function waitUntilOf(c: Context): ((work: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return undefined;
  }
}
