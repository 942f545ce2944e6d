import type { StoreLog } from '@payhook/core/store';
import pg from 'pg';
import type { Pool } from 'pg';
import { NAME } from './base/store-error.js';

/**
 * The pool the store creates (and ends) when given a connection string: connections time out
 * after `timeoutMs`, and a dropped idle connection is logged, never fatal.
 *
 * @example
 * const pool = createPool(process.env.DATABASE_URL, 2000);
 */
export function createPool(connectionString: string | undefined, timeoutMs: number, log: StoreLog): Pool {
  if (!connectionString) {
    throw new TypeError(
      `${NAME} pass \`connectionString\` (for example process.env.DATABASE_URL) or \`pool\` (a pg Pool) to postgresStore().`,
    );
  }
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: timeoutMs, keepAlive: true, idleTimeoutMillis: 30_000 });
  hearIdleErrors(pool, log);
  return pool;
}

/**
 * An idle connection that dies (a restart, a failover, an idle timeout on the server) emits
 * 'error' on its pool; unheard, it would end the process. Log it, at most every 10 s: the pool
 * drops that client and connects anew on the next query. A pool you passed that already has an
 * 'error' listener is left to it.
 *
 * @example
 * hearIdleErrors(pool, log);
 */
export function hearIdleErrors(pool: Pool, log: StoreLog): void {
  if (pool.listenerCount('error') > 0) return;
  let lastLog = 0;
  pool.on('error', (error) => {
    if (Date.now() - lastLog < 10_000) return;
    lastLog = Date.now();
    log.error(
      `${NAME} lost a Postgres connection (${error.message}); deliveries get 503 while the database is unreachable, and the pool reconnects on its own.`,
    );
  });
}

/**
 * Warn when the server acknowledges commits before they are on disk; never fails anything.
 *
 * @example
 * void warnIfNotDurable(pool, log);
 */
export async function warnIfNotDurable(pool: Pool, log: StoreLog): Promise<void> {
  try {
    const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    if (rows[0]?.synchronous_commit !== 'off') return;
    log.warn(
      `${NAME} the database runs with synchronous_commit=off: a crash of PostgreSQL can lose done records it already acknowledged, and events answered 200 then run again. Set synchronous_commit=on for the store's connections (ALTER ROLE … SET synchronous_commit = on), or pass checkDurability: false to silence this.`,
    );
  } catch {
    // Unreadable setting: nothing to say.
  }
}
