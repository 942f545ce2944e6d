// A Cloudflare Worker as merchants write one, built by wrangler without nodejs_compat and run by
// workerd in test/runtimes/workerd.test.ts.
import { Hono } from 'hono';
import { payhookHono } from '@payhook/hono';
import { matrixFetch, matrixReceiver, platformAccounts, runsAnswer, upstashFrom } from '../app/matrix-app.mjs';

// Receivers made at module scope, as the README shows: a Worker forbids random values there.
const plain = matrixReceiver();
const plainFetch = matrixFetch(plain);
// The same, handled without the Worker's waitUntil: what workerd does to a handler past the budget.
const bare = matrixReceiver();
const bareFetch = matrixFetch(bare);

// A platform's receiver, at module scope too: many accounts on /platform/webhooks/<account>.
const platformFetch = matrixFetch(matrixReceiver(platformAccounts));

// Hono, with the secret from the Worker's bindings: the adapter builds the receiver per env.
let fromEnv;
const hono = new Hono();
hono.all(
  '/hono/webhooks',
  payhookHono((env) => {
    fromEnv = matrixReceiver({ secret: env.WEBHOOK_SECRET });
    fromEnv.builds = (fromEnv.builds ?? 0) + 1;
    return fromEnv.receiver;
  }),
);
hono.get('/hono/runs', (c) =>
  fromEnv ? runsAnswer(fromEnv, new URL(c.req.url)) : Response.json({ started: 0, finished: 0, record: null }),
);
hono.get('/hono/builds', () => Response.json({ builds: fromEnv?.builds ?? 0 }));

// On the Upstash store named by the bindings (the REST bridge's URL and token), built on first use.
let upstashFetch;

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/upstash/')) {
      upstashFetch ??= matrixFetch(matrixReceiver(upstashFrom(env)));
      return upstashFetch(request, (work) => ctx.waitUntil(work));
    }
    if (pathname.startsWith('/hono/')) return hono.fetch(request, env, ctx);
    if (pathname.startsWith('/nowait/')) return bareFetch(request);
    if (pathname.startsWith('/platform/')) return platformFetch(request, (work) => ctx.waitUntil(work));
    return plainFetch(request, (work) => ctx.waitUntil(work));
  },
};
