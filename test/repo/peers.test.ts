import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import * as pgBoss from 'pg-boss';
import { expect, inject, it } from 'vitest';
import { requireRedis } from '@payhook/test-support/services';

/**
 * Which major of each peer the project's suites really ran on: the matrix in vitest.config.ts
 * aliases the lowest versions in for its 'lowest-peers' project, and this fails if an alias stops
 * taking effect (the suites would then pass on the newest versions twice).
 */
const url = await requireRedis();

it.skipIf(!url)('runs the store and queue suites on the peer versions its project names', async () => {
  const expected = inject('peers');
  // ioredis is CommonJS: the file Node loaded for it is in the require cache, under its version's folder.
  new Redis(url!, { lazyConnect: true }).disconnect();
  const files = Object.keys(createRequire(import.meta.url).cache);
  const ioredis = files.map((f) => /\/ioredis@([^/]+)\/node_modules\/ioredis\/built\/Redis\.js$/.exec(f)?.[1]).filter(Boolean);
  expect(ioredis).toContain(expected.ioredis);
  // better-sqlite3 is CommonJS too, a native addon: the SQLite store's suites ran on the build under this folder.
  new Database(':memory:').close();
  const sqlite = files
    .map((f) => /\/better-sqlite3@([^/]+)\/node_modules\/better-sqlite3\/lib\/database\.js$/.exec(f)?.[1])
    .filter(Boolean);
  expect(sqlite).toEqual([expected['better-sqlite3']]);
  // pg-boss 10 is CommonJS too (imported above, as @payhook/queue-pg-boss imports it).
  expect(typeof pgBoss.default).toBe('function');
  const pgBossFiles = files.map((f) => /\/pg-boss@([^/]+)\/node_modules\/pg-boss\/src\/index\.js$/.exec(f)?.[1]).filter(Boolean);
  expect(pgBossFiles).toEqual([expected['pg-boss']]);
  // BullMQ records its own version: on its Redis backend (6), on each connection it opens (5).
  const queue = new Queue(`peers-${process.pid}`, {
    connection: { host: new URL(url!).hostname, port: Number(new URL(url!).port || 6379) },
  });
  try {
    const inside = queue as unknown as { backend?: { version?: string }; connection?: { packageVersion?: string } };
    expect(inside.backend?.version ?? inside.connection?.packageVersion).toBe(expected.bullmq);
  } finally {
    await queue.close();
  }
});

declare module 'vitest' {
  export interface ProvidedContext {
    peers: {
      ioredis: string;
      bullmq: string;
      'pg-boss': string;
      '@upstash/redis': string;
      'better-sqlite3': string;
      '@aws-sdk/client-dynamodb': string;
    };
  }
}
