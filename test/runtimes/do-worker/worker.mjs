// A Cloudflare Worker on the Durable Object store, built by wrangler without nodejs_compat and run
// by workerd (test/runtimes/durable-object.test.ts), as two named Workers sharing one Durable
// Object namespace: two isolates, each with memory of its own.
import { memoryStore } from '@payhook/core';
import { durableObjectStore, PayhookStoreObject } from '@payhook/store-durable-object';
import { matrixFetch, matrixReceiver, SHARED_STORE_BUDGET_MS } from '../app/matrix-app.mjs';

export { PayhookStoreObject };

let store;
let onStore;
let onMemory;

/** `POST /store` with `{ method, args }`: one store call, for the store suite that runs in Node. */
async function storeCall(request) {
  const { method, args } = await request.json();
  try {
    return Response.json({ result: (await store[method](...args)) ?? null });
  } catch (error) {
    return Response.json({ error: error.message }, { status: 500 });
  }
}

/** `POST /event?key=K`: what the receiver asks of its store for a new delivery (a claim, then a complete), for bench/durable-object.mjs. */
let memory;
async function event(url) {
  const key = url.searchParams.get('key');
  // ?store=memory: the same work on the isolate's memory, to tell the Durable Object's cost from the loopback hop's.
  const on = url.searchParams.get('store') === 'memory' ? (memory ??= memoryStore({ warn: false })) : store;
  const claim = await on.claim(key, 30_000);
  if (claim.status !== 'claimed') return Response.json({ error: `expected a claim, got ${claim.status}` }, { status: 409 });
  return Response.json({ completed: await on.complete(key, claim.token) });
}

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    // Made on the first request: a Worker may do no I/O at module scope, and env comes with the request.
    store ??= durableObjectStore({ namespace: env.PAYHOOK_STORE, shards: 4 });
    if (pathname === '/store') return storeCall(request);
    if (pathname === '/event') return event(new URL(request.url));
    const waitUntil = (work) => ctx.waitUntil(work);
    if (pathname.startsWith('/memory/')) return (onMemory ??= matrixFetch(matrixReceiver()))(request, waitUntil);
    return (onStore ??= matrixFetch(matrixReceiver({ store, budgetMs: SHARED_STORE_BUDGET_MS })))(request, waitUntil);
  },
};
