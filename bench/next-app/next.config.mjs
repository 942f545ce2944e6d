import { fileURLToPath } from 'node:url';

// The workspace root: the app imports @payhook/core and @payhook/next (bench's workspace deps, packages/*/dist).
const root = fileURLToPath(new URL('../..', import.meta.url));

/** The benchmark's Next app, built with `next build` and served with `next start` by bench/http.mjs. */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
};
