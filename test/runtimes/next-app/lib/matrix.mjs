// One matrix app per runtime and server process, made on the first request: `next build` loads
// the routes with no secret in its environment.
import { matrixReceiver, runsAnswer, upstashFrom } from './matrix-app.mjs';

export { runsAnswer };

const apps = (globalThis[Symbol.for('payhook.matrix.apps')] ??= new Map());

/** `store`: 'upstash' for the Upstash store that PAYHOOK_UPSTASH_URL and PAYHOOK_UPSTASH_TOKEN name, else the memory store. */
export function matrixApp(runtime, store = 'memory') {
  const name = `${runtime}:${store}`;
  let app = apps.get(name);
  if (!app) {
    const secret = process.env.MATRIX_WEBHOOK_SECRET;
    if (!secret) throw new Error('[payhook tests] MATRIX_WEBHOOK_SECRET is not set for next start');
    const env = { PAYHOOK_UPSTASH_URL: process.env.PAYHOOK_UPSTASH_URL, PAYHOOK_UPSTASH_TOKEN: process.env.PAYHOOK_UPSTASH_TOKEN };
    apps.set(name, (app = matrixReceiver({ secret, ...(store === 'upstash' ? upstashFrom(env) : {}) })));
  }
  return app;
}
