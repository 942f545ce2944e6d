/**
 * A process for store-postgres-purge.test.ts, run with `node --import tsx`: it uses a Postgres
 * store once, with the purge every 200 ms on the real clock, does 1 s of work of its own, and must
 * then exit by itself, the purge's timer still set. Prints `PURGES <n>`, the purge statements sent,
 * on exit. Configured by env: PURGE_URL (the database), PURGE_TABLE.
 */
import pg from 'pg';
import { postgresStore } from '@payhook/store-postgres';

// allowExitOnIdle: the pool's idle connections do not hold the process either, as in an app that ends.
const pool = new pg.Pool({ connectionString: process.env.PURGE_URL, allowExitOnIdle: true, max: 1 });
let purges = 0;
const query = pool.query.bind(pool) as (config: unknown, ...rest: unknown[]) => unknown;
pool.query = ((config: { text?: string }, ...rest: unknown[]) => {
  if (config.text?.includes('pg_try_advisory_xact_lock')) purges++;
  return query(config, ...rest);
}) as unknown as typeof pool.query;
process.on('exit', () => console.log(`PURGES ${purges}`));

const store = postgresStore({ pool, table: process.env.PURGE_TABLE, purge: { everyMs: 200 } });
await store.get('k');
setTimeout(() => {}, 1_000); // the app's own work: the process has a reason to live for 1 s, then none
