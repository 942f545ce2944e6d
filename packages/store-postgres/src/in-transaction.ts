import type { Pool, PoolClient } from 'pg';
import { NAME } from './store-error.js';

/**
 * Check a client out of `pool` for `work`, and hand it back. While it is held it listens for
 * `'error'`: pg emits one on a checked-out client whose connection breaks (a server restart, a
 * failover, `pg_terminate_backend`, a network cut), and the pool only listens on idle clients, so
 * unheard it would end the process. A client whose connection broke, or that could not roll back,
 * is discarded, never returned to the pool.
 *
 * @example
 * await withClient(pool, ({ client }) => client.query('select 1'));
 */
export async function withClient<T>(pool: Pool, work: (held: Held) => Promise<T>): Promise<T> {
  const held = await checkOut(pool);
  const onError = held.onError;
  try {
    return await work(held);
  } finally {
    held.client.off('error', onError);
    // A discarded client may still report its end: let that go nowhere rather than crash.
    if (held.broken) held.client.on('error', () => {});
    held.client.release(held.broken);
  }
}

/** A checked-out client, and why its connection is unusable, once it is. */
export interface Held {
  client: PoolClient;
  broken?: Error;
}

/**
 * `pool.connect()`, with the client's 'error' listener added in the pool's own callback. The
 * pool removes its idle listener as it hands a client over, and a promise's continuation runs a
 * microtask later: a server that ends every backend at once (`pg_ctl restart`, a failover) can have
 * the last answer of the client's previous holder and the termination arrive in one read, so the
 * client is handed over and emits 'error' within that one read, before an awaited caller could
 * listen, and the unheard error ended the process.
 */
function checkOut(pool: Pool): Promise<Held & { onError: (error: Error) => void }> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || !client) return reject(error ?? new Error(`${NAME} the pool gave no client`));
      const held: Held & { onError: (error: Error) => void } = { client, onError: (e: Error) => void (held.broken ??= e) };
      client.on('error', held.onError);
      resolve(held);
    });
  });
}

/**
 * Run `work` in a transaction on a client of `pool`. An error of `work` passes through after a
 * rollback; a connection that broke becomes the package's error saying what happened to the
 * transaction.
 *
 * @example
 * await inTransaction(pool, async (client) => {
 *   await client.query('UPDATE orders SET paid = true WHERE id = $1', [id]);
 * });
 */
export async function inTransaction(pool: Pool, work: (client: PoolClient) => Promise<void>): Promise<void> {
  await withClient(pool, async (held) => {
    const { client } = held;
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      // pg rejects the query in flight first and emits 'error' just after: try the ROLLBACK, then look.
      if (!held.broken) await client.query('ROLLBACK').catch((e: Error) => (held.broken ??= e));
      if (!held.broken) throw error;
      const reason = error instanceof Error ? error.message : held.broken.message;
      throw new Error(
        `${NAME} the connection to PostgreSQL broke during a transaction (${reason}). The server rolled it back, or committed it if only the answer to COMMIT was lost; either way its done record went with it, so the service's retry finds the event done or runs it once. If this repeats, check the database's health.`,
        { cause: error },
      );
    }
  });
}
