import { fileURLToPath } from 'node:url';

// The workspace root, from test/runtimes/nextNN where the test copies this: @payhook/* resolve to
// packages/*/dist through workspace links.
const root = fileURLToPath(new URL('../../..', import.meta.url));

/** One config for Next 14, 15 and 16; each ignores (with a warning) what it does not know. */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
  eslint: { ignoreDuringBuilds: true },
};
