import pg from 'pg';
import type { Pool } from 'pg';
import { NAME } from './store-error.js';

/**
 * The pool the store creates (and ends) when given a connection string: connections time out
 * after `timeoutMs`, and a dropped idle connection is logged (at most every 10 s), never fatal.
 *
 * @example
 * const pool = createPool(process.env.DATABASE_URL, 2000);
 */
export function createPool(connectionString: string | undefined, timeoutMs: number): Pool {
  if (!connectionString) {
    throw new TypeError(
      `${NAME} pass \`connectionString\` (for example process.env.DATABASE_URL) or \`pool\` (a pg Pool) to postgresStore().`,
    );
  }
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: timeoutMs, keepAlive: true, idleTimeoutMillis: 30_000 });
  let lastLog = 0;
  // An idle connection that dies emits 'error' on the pool; unheard, it would crash the process.
  pool.on('error', (error) => {
    if (Date.now() - lastLog < 10_000) return;
    lastLog = Date.now();
    console.error(`${NAME} lost a Postgres connection (${error.message}); deliveries get 503 while the database is unreachable, and the pool reconnects on its own.`);
  });
  return pool;
}
