import { fileURLToPath } from 'node:url';

// The workspace root, so Next traces the linked @payhook packages.
const root = fileURLToPath(new URL('../..', import.meta.url));

/** The shop on Next.js (App Router). */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
  // The shared shop logic is TypeScript source; the store drivers stay plain Node modules.
  transpilePackages: ['@payhook/example-shop'],
  serverExternalPackages: ['ioredis', 'pg'],
  // The workspace's own `tsc` checks these files.
  typescript: { ignoreBuildErrors: true },
};
