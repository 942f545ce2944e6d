import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = fileURLToPath(new URL('./packages/', import.meta.url));
const shop = fileURLToPath(new URL('./examples/shop/src/', import.meta.url));

// Tests import the packages' sources, so a test run never depends on a stale dist/.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@payhook\/core\/(node|adapter|api|otel|queue)$/, replacement: `${packages}core/src/$1.ts` },
      // Tests run on Node: the platform modules the `node` export condition picks.
      { find: /^@payhook\/core\/bridge$/, replacement: `${packages}core/src/platform/bridge-node.ts` },
      { find: /^#platform$/, replacement: `${packages}core/src/platform/node.ts` },
      { find: /^@payhook\/testing\/(store|ledger)$/, replacement: `${packages}testing/src/$1.ts` },
      { find: /^@payhook\/example-shop\/listen$/, replacement: `${shop}listen.ts` },
      { find: /^@payhook\/example-shop$/, replacement: `${shop}index.ts` },
      { find: /^@payhook\/([a-z-]+)$/, replacement: `${packages}$1/src/index.ts` },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
