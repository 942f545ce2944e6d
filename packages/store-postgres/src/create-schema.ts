import type pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from './in-transaction.js';
import { schemaSql } from './schema.js';
import { NAME, storeError } from './store-error.js';

/**
 * Create the table; an advisory lock makes processes that start together take turns.
 *
 * @example
 * await createSchema(pool, 'payhook_deliveries', 2000);
 */
export async function createSchema(pool: Pool, table: string, timeoutMs: number): Promise<void> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (cause) {
    throw storeError('create the table', table, cause, table);
  }
  try {
    await inTransaction(client, async () => {
      await client.query({ text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [`@payhook/store-postgres:${table}`], query_timeout: timeoutMs * 5 } as pg.QueryConfig);
      await client.query(schemaSql(table));
    });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `${NAME} could not create the table ${table} (${reason}). Grant CREATE to the store's user, or create it from the package's schema.sql and pass createTable: false.`,
      { cause },
    );
  }
}
