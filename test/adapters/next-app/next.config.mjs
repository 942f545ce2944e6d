import { fileURLToPath } from 'node:url';

// The workspace root: the app imports @payhook/core and @payhook/next from packages/*/dist.
const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The app the adapter suite builds with `next build` and serves with `next start`. */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
  // The workspace's own `tsc` checks these files; the build need not check them again.
  typescript: { ignoreBuildErrors: true },
};
