/**
 * A receiver process for the multi-process and crash tests, bundled from its sources (the workspace
 * packages resolve through tsconfig `paths`) and run by Node: see startChild. Configured by env:
 *
 *   CHILD_STORE       redis | postgres | sqlite
 *   CHILD_URL         the Redis URL, Postgres connection string or SQLite file
 *   CHILD_SECRET      the webhook secret
 *   CHILD_RUN         the test run's id: effects are recorded under it
 *   CHILD_EFFECT      redis-counter | pg-insert | pg-transactional
 *   CHILD_EFFECT_URL  where redis-counter and pg-insert record effects (default CHILD_URL), so a
 *                     fault test can break the store's server and still count effects elsewhere
 *   CHILD_LEASE_MS, CHILD_BUDGET_MS
 *   CHILD_AFTER_BUDGET accept | retry: the receiver's `afterBudget` (default accept)
 *   CHILD_LEDGER      1: the store keeps its delivery ledger (`ledger: true`), so every delivery
 *                     also writes there (more of the store's queries in flight)
 *   CHILD_PG_LISTEN   0: the Postgres store's `listen: false` (no NOTIFY: the documented setting beside a
 *                     synchronous standby)
 *   CHILD_PG_MAX      the Postgres store's pool size: a pool of the child's own, passed as `pool`
 *                     (default: the store creates its own, of pg's default 10)
 *   CHILD_EFFECT_MS   pg-transactional: hold the transaction open this long (pg_sleep) before
 *                     the insert, so a fault test finds transactions open when it breaks the server
 *   CHILD_REDIS_WAIT  redis: the store's `waitForReplicas` count (CHILD_REDIS_WAIT_MS its timeout)
 *   CHILD_REDIS_SENTINELS  redis: `host:port,…` of Sentinels, the store then uses an ioredis client
 *                     of its own made with `sentinels` (CHILD_REDIS_MASTER names the group; CHILD_URL unused)
 *   CHILD_HANG_AT     after-claim | mid-handler | after-effect: print `POINT <name>` there and
 *                     hang, for the parent to kill -9 this process
 *
 * Prints `READY <port>` once it listens on 127.0.0.1.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type DeliveryReport, type EventHandler, type Store } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { sqliteStore } from '@payhook/store-sqlite';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`[receiver child] set ${name}`);
  return v;
};
const storeKind = env('CHILD_STORE');
const url = env('CHILD_URL');
const run = env('CHILD_RUN');
const effectKind = env('CHILD_EFFECT');
const hangAt = process.env.CHILD_HANG_AT ?? '';
const effectMs = Number(process.env.CHILD_EFFECT_MS ?? 0);
const REDIS_PREFIX = 'payhook-test:';

const never = () => new Promise<never>(() => {});
/** Tell the parent where we are, then wait to be killed. */
async function point(name: string): Promise<never> {
  process.stdout.write(`POINT ${name}\n`);
  return never();
}

const ledger = process.env.CHILD_LEDGER === '1';
// A small pool keeps deliveries waiting for a connection, so most clients pass from one holder to a waiter.
const pgMax = process.env.CHILD_PG_MAX;
const connection = pgMax
  ? { pool: new pg.Pool({ connectionString: url, max: Number(pgMax), connectionTimeoutMillis: 2_000, keepAlive: true }) }
  : { connectionString: url };
const listen = process.env.CHILD_PG_LISTEN !== '0';
const pgStore = storeKind === 'postgres' ? postgresStore({ ...connection, listen, ...(ledger && { ledger: true as const }) }) : undefined;
const sqlite = storeKind === 'sqlite' ? sqliteStore({ path: url, driver: Database, ...(ledger && { ledger: true as const }) }) : undefined;
const redisWait = process.env.CHILD_REDIS_WAIT;
const sentinels = process.env.CHILD_REDIS_SENTINELS;
// Through Sentinel the client asks the Sentinels where the primary is, and asks again after a failover.
const redisConnection = sentinels
  ? {
      client: new Redis({
        sentinels: sentinels.split(',').map((s) => ({ host: s.split(':')[0]!, port: Number(s.split(':')[1]) })),
        name: env('CHILD_REDIS_MASTER', 'payhook'),
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 2_000,
        connectTimeout: 2_000,
        socketTimeout: 2_000,
        autoResendUnfulfilledCommands: false,
        retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
        // Told by the Sentinels of a switch (+switch-master), the client reconnects at once rather than staying on a demoted primary.
        failoverDetector: true,
      }).on('error', () => {}),
    }
  : { url };
const base: Store =
  pgStore ??
  sqlite ??
  redisStore({
    ...redisConnection,
    prefix: REDIS_PREFIX,
    retentionMs: 3_600_000, // test keys clean themselves up
    ...(ledger && { ledger: true as const }),
    ...(redisWait && { waitForReplicas: { count: Number(redisWait), timeoutMs: Number(process.env.CHILD_REDIS_WAIT_MS ?? 1_000) } }),
  });
const store: Store =
  hangAt === 'after-claim'
    ? {
        ...base,
        async claim(key, leaseMs) {
          const r = await base.claim(key, leaseMs);
          if (r.status === 'claimed') await point('after-claim');
          return r;
        },
      }
    : base;

// Effects are recorded where the parent can count them: one row or one counter increment per run of the handler.
const effectUrl = process.env.CHILD_EFFECT_URL ?? url;
const effectRedis = effectKind === 'redis-counter' ? new Redis(effectUrl) : undefined;
const effectPool = effectKind === 'pg-insert' ? new pg.Pool({ connectionString: effectUrl }) : undefined;
// A pool of the merchant's own needs its 'error' listener: without one, an idle connection that dies with a restart ends the process.
effectPool?.on('error', (error) => console.error(`[receiver child] effects pool: ${error.message}`));
const insertEffect = 'insert into payhook_test_effects (run, key, attempt, pid) values ($1, $2, $3, $4)';

let handler: EventHandler;
if (effectKind === 'pg-transactional') {
  if (!pgStore) throw new Error('[receiver child] pg-transactional needs CHILD_STORE=postgres');
  const tx = pgStore.transactional(async (event, ctx, client) => {
    if (hangAt === 'mid-handler') await point('mid-handler');
    if (effectMs > 0) await client.query('select pg_sleep($1)', [effectMs / 1000]);
    await client.query(insertEffect, [run, event.reference, ctx.attempt, process.pid]);
  });
  handler = async (event, ctx) => {
    await tx(event, ctx);
    if (hangAt === 'after-effect') await point('after-effect');
  };
} else {
  handler = async (event, ctx) => {
    if (hangAt === 'mid-handler') await point('mid-handler');
    if (effectRedis) {
      await effectRedis.hincrby(`payhook-test-effects:${run}`, event.reference, 1);
      await effectRedis.pexpire(`payhook-test-effects:${run}`, 3_600_000);
    } else {
      await effectPool!.query(insertEffect, [run, event.reference, ctx.attempt, process.pid]);
    }
    if (hangAt === 'after-effect') await point('after-effect');
  };
}

const receiver = createReceiver({
  secret: env('CHILD_SECRET'),
  store,
  leaseMs: Number(env('CHILD_LEASE_MS', '30000')),
  budgetMs: Number(env('CHILD_BUDGET_MS', '8000')),
  afterBudget: env('CHILD_AFTER_BUDGET', 'accept') as 'accept' | 'retry',
  logger: {
    // Warnings too, on one line each, so a test can find the store's start-up check.
    warn: (_fields: unknown, message: string) => console.error(`WARN ${message}`),
    // Errors go to stderr, which the parent shows when a test fails.
    error: (fields: DeliveryReport & { err?: unknown }, message: string) =>
      console.error(message, fields.outcome, fields.dedupeKey, String(fields.err)),
  },
}).onAny(handler);

const server = createServer(toNodeListener(receiver));
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
