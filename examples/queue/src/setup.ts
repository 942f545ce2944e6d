/**
 * What the web process and the workers share, read from the environment:
 *
 *   QUEUE_ENGINE   pg-boss (default: Postgres alone) or bullmq (adds Redis)
 *   DATABASE_URL   default postgres://postgres@127.0.0.1:5432/test: orders, payhook's done
 *                  records and, with pg-boss, the jobs
 *   REDIS_URL      default redis://127.0.0.1:6379, for BullMQ
 *   QUEUE_NAME     default payhook-example; dead letters go to <name>-dead-letter
 *   LOG_LEVEL      info (default) or debug (also duplicates and ignored events)
 */
import type { LogFunction } from '@payhook/core';
import { bullmqQueue, type PayhookBullmqQueue } from '@payhook/queue-bullmq';
import { pgBossQueue, type PayhookPgBossQueue } from '@payhook/queue-pg-boss';
import { postgresStore, type PostgresStore } from '@payhook/store-postgres';
import pg from 'pg';

const env = process.env;
const ENGINE = env.QUEUE_ENGINE ?? 'pg-boss';
if (ENGINE !== 'pg-boss' && ENGINE !== 'bullmq') {
  throw new Error(`[queue example] QUEUE_ENGINE must be pg-boss or bullmq; got ${JSON.stringify(ENGINE)}`);
}
const DATABASE_URL = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE_NAME = env.QUEUE_NAME ?? 'payhook-example';

/** The app's own pool: orders live here, and the store writes its done records through it. */
export const pool = new pg.Pool({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2_000 });
pool.on('error', (error) => console.error(`[queue example] an idle Postgres connection failed: ${error.message}`));

/**
 * The Postgres store on both sides: the web process claims `queued:<key>` while it enqueues, the
 * worker claims the event's own key while its handlers run, and `store.transactional` commits the
 * order's update with that done record.
 */
export const store: PostgresStore = postgresStore({ pool, table: 'payhook_example_queue_deliveries' });

export type Queue = { engine: 'pg-boss'; queue: PayhookPgBossQueue } | { engine: 'bullmq'; queue: PayhookBullmqQueue };

export const queue: Queue =
  ENGINE === 'pg-boss'
    ? // The job is sent on the store's transaction: it commits with the web process's done record.
      { engine: 'pg-boss', queue: pgBossQueue({ store, connectionString: DATABASE_URL, name: QUEUE_NAME }) }
    : // The job id is the event's dedupe key: queuing the same event again adds nothing.
      { engine: 'bullmq', queue: bullmqQueue({ connection: redisConnection(REDIS_URL), name: QUEUE_NAME }) };

/** Connect now rather than on the first delivery or job, so that a queue that is down shows at start. */
export async function connectQueue(): Promise<void> {
  if (queue.engine === 'bullmq') await queue.queue.queue.waitUntilReady();
  else await queue.queue.ready();
}

/** ioredis options from a redis:// URL (BullMQ takes ioredis options or an ioredis instance). */
function redisConnection(url: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number(u.pathname.slice(1) || 0),
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

export const ORDERS = 'queue_example_orders';
export const PAYMENTS = 'queue_example_payments';

/**
 * The orders and the payments recorded against them. `payments` has no unique key so that a
 * second run of an event would show as a second row; a real shop puts a unique index on
 * `reference` as the last line of defence.
 */
const SCHEMA = `
  create table if not exists ${ORDERS} (
    id text primary key,
    amount numeric(14, 2) not null,
    status text not null default 'pending',
    payment_reference text,
    paid_at timestamptz,
    created_at timestamptz not null default now()
  );
  create table if not exists ${PAYMENTS} (
    id bigserial primary key,
    order_id text not null references ${ORDERS} (id),
    reference text not null,
    amount numeric(14, 2) not null,
    job_id text not null,
    attempt int not null,
    recorded_at timestamptz not null default now()
  );
  create index if not exists ${PAYMENTS}_order_id on ${PAYMENTS} (order_id);
`;

/** Create the tables; the web process and the workers all call it at start, one at a time. */
export async function createTables(): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select pg_advisory_xact_lock(hashtext('payhook queue example schema'))");
    await client.query(SCHEMA);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** payhook's reports as one line each: `[queue:web] payment.success P…: delivery queued (200)`. */
export function logLines(who: 'web' | 'worker'): LogFunction {
  const debug = env.LOG_LEVEL === 'debug';
  return (level, fields, message) => {
    if (level === 'debug' && !debug) return;
    const { event, reference, err } = fields as { event?: string; reference?: string; err?: unknown };
    const what = event ? `${event} ${reference}: ` : '';
    const why = err === undefined ? '' : ` (${err instanceof Error ? err.message : String(err)})`;
    const line = `[queue:${who}] ${what}${message.replace('[@payhook/core] ', '')}${why}`;
    if (level === 'error') console.error(line);
    else if (level === 'warn') console.warn(line);
    else console.log(line);
  };
}

/** Stop on SIGINT or SIGTERM: `stop` first (the server, or the worker's running jobs), then the connections. */
export function closeOnSignal(stop: () => Promise<void>): void {
  const close = async () => {
    try {
      await stop();
      await queue.queue.close();
      await pool.end();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
}
