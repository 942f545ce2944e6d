import pg from 'pg';
import { Redis } from 'ioredis';

/**
 * Where the receiver children record each run of a handler, so a test can count effects:
 * a Postgres table (row per run) or a Redis hash (counter per reference) per test run.
 */
export async function effectsTable(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const client = await pool.connect();
  try {
    // Test files run in parallel: take turns creating the table.
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('payhook_test_effects'))`);
    await client.query(
      'create table if not exists payhook_test_effects (run text not null, key text not null, attempt int, pid int, at timestamptz not null default now())',
    );
    await client.query('commit');
  } finally {
    client.release();
  }
  return pool;
}

/** Runs of the handler per reference, for one test run. */
export async function countPg(pool: pg.Pool, run: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ key: string; n: number }>(
    'select key, count(*)::int as n from payhook_test_effects where run = $1 group by key',
    [run],
  );
  return new Map(rows.map((r) => [r.key, r.n]));
}

/** Runs of the handler per reference, for one test run: on a client, or on the Redis at a URL (through a connection of its own). */
export async function countRedis(redis: Redis | string, run: string): Promise<Map<string, number>> {
  const client = typeof redis === 'string' ? new Redis(redis) : redis;
  try {
    const all = await client.hgetall(`payhook-test-effects:${run}`);
    return new Map(Object.entries(all).map(([k, v]) => [k, Number(v)]));
  } finally {
    if (client !== redis) client.disconnect();
  }
}
