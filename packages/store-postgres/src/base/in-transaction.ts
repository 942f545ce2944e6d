import type { Pool, PoolClient, QueryConfig } from 'pg';
import { MAX_TIMER_MS, NAME } from './store-error.js';

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
 * Run `work` in a transaction on a client of `pool`, for at most `limitMs`. An error of `work`
 * passes through after a rollback; a connection that broke, or a transaction past its limit, becomes
 * the package's error saying what happened to the transaction.
 *
 * The limit is what ends a transaction on a connection a partition silenced: nothing ever errors
 * there by itself, and the client would hold its pooled connection, and the server its row lock,
 * for ever. At the limit the client's socket is destroyed (pg then fails the query in flight), and
 * the server, told the same limit with `SET LOCAL idle_in_transaction_session_timeout`, ends the
 * backend that waits on a client it no longer hears, and with it the lock.
 *
 * @example
 * await inTransaction(pool, { limitMs: 15_000, statementMs: 2_000 }, async (client) => {
 *   await client.query('UPDATE orders SET paid = true WHERE id = $1', [id]);
 * });
 */
export async function inTransaction(pool: Pool, limits: TransactionLimits, work: (client: PoolClient) => Promise<void>): Promise<void> {
  await withClient(pool, async (held) => {
    const { client } = held;
    const { statementMs } = limits;
    // Node's timers and Postgres's setting both end at 2^31 - 1 ms (about 24.8 days).
    const limitMs = Math.min(Math.ceil(limits.limitMs), MAX_TIMER_MS);
    const end = (reason: Error) => {
      held.broken ??= reason;
      destroySocket(client, held.broken);
    };
    const timer = setTimeout(() => end(new Error(`the transaction ran past transactionTimeoutMs (${limitMs} ms)`)), limitMs);
    // BEGIN and ROLLBACK are quick when the server hears them: one unanswered means a silent connection.
    const quick = (text: string) =>
      client.query({ text, query_timeout: statementMs } as QueryConfig).catch((error: Error) => {
        if (error.message === 'Query read timeout') end(new Error(`no answer to ${text.split(';')[0]} within ${statementMs} ms`));
        throw error;
      });
    try {
      // One round trip: the server ends this backend if it waits longer than the limit between two statements.
      await quick(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${limitMs}`);
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      // pg rejects the query in flight first and emits 'error' just after: try the ROLLBACK, then look.
      if (!held.broken) await quick('ROLLBACK').catch((e: Error) => (held.broken ??= e));
      if (!held.broken) throw error;
      const reason = error instanceof Error ? error.message : held.broken.message;
      const raise = held.broken.message.includes('transactionTimeoutMs')
        ? ', or raise transactionTimeoutMs if your handler needs longer'
        : '';
      throw new Error(
        `${NAME} the connection to PostgreSQL broke during a transaction (${reason}). The server rolled it back, or committed it if only the answer to COMMIT was lost; either way its done record went with it, so the service's retry finds the event done or runs it once. If this repeats, check the database's health and the network to it${raise}.`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  });
}

/** How long a transaction may run in all, and how long its BEGIN or ROLLBACK may wait for an answer. */
export interface TransactionLimits {
  limitMs: number;
  statementMs: number;
}

/** pg has no socket timeout of its own: destroying its socket fails the query in flight and emits 'error' on the client. */
function destroySocket(client: PoolClient, reason: Error): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection?.stream;
  stream?.destroy(reason);
}
