import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string, file = 'index.ts') =>
  fileURLToPath(new URL(`./packages/${pkg}/src/${file}`, import.meta.url));

// Tests import the packages' sources, so a test run never depends on a stale dist/.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@payhook\/core\/node$/, replacement: src('core', 'node.ts') },
      { find: /^@payhook\/core$/, replacement: src('core') },
      { find: /^@payhook\/reference$/, replacement: src('reference') },
      { find: /^@payhook\/client$/, replacement: src('client') },
      { find: /^@payhook\/store-redis$/, replacement: src('store-redis') },
      { find: /^@payhook\/store-postgres$/, replacement: src('store-postgres') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
