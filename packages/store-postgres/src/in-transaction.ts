import type { PoolClient } from 'pg';

/**
 * Run `work` in a transaction on `client` and hand the client back. A connection that could not
 * roll back is dropped, never returned to the pool mid-transaction.
 *
 * @example
 * const client = await pool.connect();
 * await inTransaction(client, async () => {
 *   await client.query('UPDATE orders SET paid = true WHERE id = $1', [id]);
 * });
 */
export async function inTransaction(client: PoolClient, work: () => Promise<void>): Promise<void> {
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch((e: Error) => {
      broken = e;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
