/**
 * The queue the queue children share, from env:
 *
 *   QUEUE_ENGINE      bullmq | pg-boss
 *   QUEUE_NAME        the queue's name, unique per test run
 *   QUEUE_ATTEMPTS, QUEUE_BACKOFF_MS, QUEUE_EXPIRE_S (pg-boss)
 *   CHILD_URL         the Postgres connection string (store, effects, pg-boss)
 *   CHILD_TABLE       the store's table
 *   CHILD_REDIS       the Redis URL (BullMQ)
 *   QUEUE_REDIS_WAIT  BullMQ: 1 for waitForReplicas { count: 1 } (a job answered 202 is on a replica);
 *                     QUEUE_REDIS_WAIT_MS its timeoutMs (default 1000). Unset: no wait
 */
import { postgresStore } from '@payhook/store-postgres';
import pg from 'pg';
import { bullmqQueue } from '@payhook/queue-bullmq';
import { pgBossQueue } from '@payhook/queue-pg-boss';

export const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`[queue child] set ${name}`);
  return v;
};

export const engine = env('QUEUE_ENGINE');
export const url = env('CHILD_URL');
// Small pools: a test starts up to six of these processes against one server (max_connections 100),
// while other test files use it too.
const pool = new pg.Pool({ connectionString: url, max: Number(env('CHILD_PG_MAX', '4')), connectionTimeoutMillis: 5_000 });
// CHILD_PG_LISTEN=0: `listen: false`, the setting beside a synchronous standby (no NOTIFY lock).
export const store = postgresStore({ pool, table: env('CHILD_TABLE', 'payhook_deliveries'), listen: process.env.CHILD_PG_LISTEN !== '0' });
const common = {
  name: env('QUEUE_NAME'),
  attempts: Number(env('QUEUE_ATTEMPTS', '8')),
  backoffMs: Number(env('QUEUE_BACKOFF_MS', '1000')),
};
export const queue =
  engine === 'bullmq'
    ? bullmqQueue({
        ...common,
        connection: redisOptions(env('CHILD_REDIS', 'redis://127.0.0.1:6379')),
        ...(process.env.QUEUE_REDIS_WAIT === '1' && {
          waitForReplicas: { count: 1, timeoutMs: Number(env('QUEUE_REDIS_WAIT_MS', '1000')) },
        }),
      })
    : pgBossQueue({
        ...common,
        store,
        connectionString: url,
        expireInSeconds: Number(env('QUEUE_EXPIRE_S', '300')),
        // Small pools: the tests start several of these processes against one server.
        bossOptions: { max: 3, maintenanceIntervalSeconds: Number(env('QUEUE_MAINTENANCE_S', '120')) },
      });

function redisOptions(redisUrl: string) {
  const u = new URL(redisUrl);
  return { host: u.hostname, port: Number(u.port || 6379) };
}

const never = () => new Promise<never>(() => {});
/** Tell the parent where we are, then wait to be killed. */
export async function point(name: string): Promise<never> {
  process.stdout.write(`POINT ${name}\n`);
  return never();
}
