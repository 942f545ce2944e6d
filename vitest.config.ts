import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/** The lowest version of each peer payhook's ranges allow, installed under an alias (package.json). */
const lowest = (alias: string) => fileURLToPath(import.meta.resolve(alias));
const versionOf = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;

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
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      // Everything, on the newest major of every peer (the versions in package.json).
      {
        extends: true,
        test: {
          name: 'payhook',
          include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          provide: { peers: { ioredis: versionOf('ioredis'), bullmq: versionOf('bullmq'), 'pg-boss': versionOf('pg-boss') } },
        },
      },
      // The other end of each peer range: the store's and the queue's contracts again on the lowest versions.
      {
        extends: true,
        resolve: {
          alias: [
            { find: /^ioredis$/, replacement: lowest('ioredis-lowest') },
            { find: /^bullmq$/, replacement: lowest('bullmq-lowest') },
            { find: /^pg-boss$/, replacement: lowest('pg-boss-lowest') },
          ],
        },
        test: {
          name: 'lowest-peers',
          include: ['test/store-redis.test.ts', 'test/ledger-redis.test.ts', 'test/queue/conformance.test.ts', 'test/peers.test.ts'],
          provide: { peers: { ioredis: versionOf('ioredis-lowest'), bullmq: versionOf('bullmq-lowest'), 'pg-boss': versionOf('pg-boss-lowest') } },
        },
      },
    ],
  },
});
