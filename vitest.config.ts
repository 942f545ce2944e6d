import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { slowFirst } from './test/support/run/slow-first.js';

const require = createRequire(import.meta.url);

/** The lowest version of each peer payhook's ranges allow, installed under an alias (package.json). */
const lowest = (alias: string) => fileURLToPath(import.meta.resolve(alias));
/** A package's version, from the nearest package.json above its main file that has one: not every package exports it (@upstash/redis does not). */
function versionOf(name: string): string {
  for (let dir = dirname(require.resolve(name)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    const version = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version : undefined;
    if (version !== undefined) return version;
    if (dirname(dir) === dir) throw new Error(`no package.json with a version above ${require.resolve(name)}`);
  }
}

const packages = fileURLToPath(new URL('./packages/', import.meta.url));
const shop = fileURLToPath(new URL('./examples/shop/src/', import.meta.url));
const support = fileURLToPath(new URL('./test/support/', import.meta.url));

const newest = {
  ioredis: versionOf('ioredis'),
  bullmq: versionOf('bullmq'),
  'pg-boss': versionOf('pg-boss'),
  '@upstash/redis': versionOf('@upstash/redis'),
  'better-sqlite3': versionOf('better-sqlite3'),
  '@aws-sdk/client-dynamodb': versionOf('@aws-sdk/client-dynamodb'),
};

/**
 * The files whose subject is a server's faults (kill -9, restarts, failovers, partitions): they run
 * after everything else, two at a time (issue 55). Each starts its own servers and children and
 * counts effects; most of its time is spent waiting out a fault, so a second one beside it costs it
 * little, where the main tier's three files at a time would crowd its deadlines.
 */
const FAULTS = [
  'test/faults/!(postgres-failover).test.ts',
  'test/processes/{crash,store-down,waiting-copies}.test.ts',
  'test/queue/{kill-web,kill-worker}.test.ts',
];
/**
 * The files whose subject is timing or load (wall-clock bounds, floods, throughput): they run one at
 * a time once everything else is done (issue 38), so that no other file makes the noise they measure.
 */
const ALONE = [
  // Beside another fault file, a receiver once missed the log line that names the reconcile after
  // a failover early in its life (its first read of the primary's identity had not come back).
  'test/faults/postgres-failover.test.ts',
  'test/security/{slowloris,load,refusal-flood}.test.ts',
  'packages/reference/test/security/{rate-limit,idempotency-race}.test.ts',
  'test/security/fuzz/*.test.ts',
  'test/processes/multi-process.test.ts',
  'test/queue/load.test.ts',
  'test/adapters/bounded-senders.test.ts',
  'test/ledger/load.test.ts',
];

/** The files that take longest in their tier, longest first, measured on fresh-clone runs: they start first (test/support/run/slow-first.ts). */
const SLOWEST = [
  'test/runtimes/next.test.ts',
  'test/release/release.test.ts',
  'test/release/exports.test.ts',
  'test/release/vitest-peers.test.ts',
  'test/release/pg-boss-peers.test.ts',
  'test/examples.test.ts',
  'test/adapters/next.test.ts',
  'test/board/browser.test.ts',
  'test/docs/site.test.ts',
  'test/queue/conformance.test.ts',
  'test/faults/partition.test.ts',
  'test/queue/kill-worker.test.ts',
  'test/faults/postgres-failover.test.ts',
  'test/faults/queue-failover.test.ts',
  'test/faults/redis-failover.test.ts',
];

// Tests import the packages' sources, so a test run never depends on a stale dist/ (also used by vitest.unit.config.ts).
export const alias = [
  { find: /^@payhook\/core\/(node|api|otel|queue|store|lifecycle|verify)$/, replacement: `${packages}core/src/$1.ts` },
  // Tests run on Node: the modules the `node` export condition picks.
  { find: /^@payhook\/core\/adapter$/, replacement: `${packages}core/src/adapter-node.ts` },
  { find: /^#platform$/, replacement: `${packages}core/src/platform/node-apis.ts` },
  { find: /^@payhook\/testing\/(store|ledger)$/, replacement: `${packages}testing/src/$1.ts` },
  { find: /^@payhook\/board\/node$/, replacement: `${packages}board/src/node.ts` },
  { find: /^@payhook\/store-redis\/scripts$/, replacement: `${packages}store-redis/src/scripts.ts` },
  { find: /^@payhook\/store-sqlite\/sql$/, replacement: `${packages}store-sqlite/src/sql.ts` },
  { find: /^@payhook\/example-shop\/listen$/, replacement: `${shop}listen.ts` },
  { find: /^@payhook\/example-shop$/, replacement: `${shop}index.ts` },
  // The tests' own helpers, shared by every package's tests, the root's and bench/ (test/support).
  { find: /^@payhook\/test-support\/(.+)$/, replacement: `${support}$1.ts` },
  { find: /^@payhook\/([a-z-]+)$/, replacement: `${packages}$1/src/index.ts` },
];

export default defineConfig({
  resolve: { alias },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // The run ends by naming every suite skipped for want of Redis, PostgreSQL or Chromium (issue 57).
    reporters: ['default', './test/support/run/skipped-reporter.ts'],
    sequence: { sequencer: slowFirst(SLOWEST) },
    projects: [
      // Everything but the files below, on the newest major of every peer (the versions in
      // package.json), three files at a time on two cores: most wait on sockets, servers and child processes.
      {
        extends: true,
        test: {
          name: 'payhook',
          include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...FAULTS, ...ALONE],
          provide: { peers: newest },
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
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
            { find: /^@upstash\/redis$/, replacement: lowest('@upstash/redis-lowest') },
            { find: /^better-sqlite3$/, replacement: lowest('better-sqlite3-lowest') },
            { find: /^@aws-sdk\/client-dynamodb$/, replacement: lowest('@aws-sdk/client-dynamodb-lowest') },
          ],
        },
        test: {
          name: 'lowest-peers',
          include: [
            'packages/store-redis/test/{store-redis,ledger-redis}.test.ts',
            'packages/store-upstash/test/store-upstash.test.ts',
            'packages/store-sqlite/test/store-sqlite.test.ts',
            'packages/store-dynamodb/test/store-dynamodb.test.ts',
            'test/queue/conformance.test.ts',
            'test/queue/replicas.test.ts',
            'test/repo/peers.test.ts',
          ],
          provide: {
            peers: {
              ioredis: versionOf('ioredis-lowest'),
              bullmq: versionOf('bullmq-lowest'),
              'pg-boss': versionOf('pg-boss-lowest'),
              '@upstash/redis': versionOf('@upstash/redis-lowest'),
              'better-sqlite3': versionOf('better-sqlite3-lowest'),
              '@aws-sdk/client-dynamodb': versionOf('@aws-sdk/client-dynamodb-lowest'),
            },
          },
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      // Where a server's faults are the subject: two files at a time, after the rest.
      {
        extends: true,
        test: { name: 'faults', include: FAULTS, provide: { peers: newest }, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      // Where timing or load is the subject: one file at a time, last, on a quiet machine.
      {
        extends: true,
        test: { name: 'alone', include: ALONE, provide: { peers: newest }, maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
