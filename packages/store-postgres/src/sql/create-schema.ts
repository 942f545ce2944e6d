import type pg from 'pg';
import type { Pool } from 'pg';
import { inTransaction } from '../base/in-transaction.js';
import { schemaSql } from './schema.js';
import { NAME, storeError } from '../base/store-error.js';

/**
 * Create the table, and the ledger's when `ledger`; an advisory lock makes processes that start
 * together take turns.
 *
 * @example
 * await createSchema(pool, 'payhook_deliveries', 2000);
 */
export async function createSchema(pool: Pool, table: string, timeoutMs: number, ledger = false): Promise<void> {
  try {
    // The advisory lock may wait for another process's creation: the limit is well past its own timeout.
    await inTransaction(pool, { limitMs: timeoutMs * 10, statementMs: timeoutMs }, async (client) => {
      await client.query({
        text: 'SELECT pg_advisory_xact_lock(hashtext($1))',
        values: [`@payhook/store-postgres:${table}`],
        query_timeout: timeoutMs * 5,
      } as pg.QueryConfig);
      await client.query(schemaSql(table, { ledger }));
    });
  } catch (cause) {
    // Refused by the database (no privilege, no such schema): say how to create the table instead.
    const code = (cause as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && /^(42|3F)/.test(code)) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new Error(
        `${NAME} could not create the table ${table} (${reason}). Grant CREATE to the store's user, or create it from the package's schema.sql and pass createTable: false.`,
        { cause },
      );
    }
    // Unreachable, or the connection broke: the store's message for a database that is down.
    throw storeError('create the table', table, cause, table);
  }
}
