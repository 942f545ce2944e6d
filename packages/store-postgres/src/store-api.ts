import type { Clock, EventHandler, PaymentEventName, Store } from '@payhook/core';
import type { LedgerOptions } from '@payhook/core/store';
import type pg from 'pg';
import type { Pool } from 'pg';
import type { PurgeOptions } from './purge.js';
import type { TransactionalEffect, TransactionalOptions } from './transactional.js';

// What a merchant passes to postgresStore() and what it gives back; postgres-store.ts builds it.
/** What `postgresStore` takes: a pg Pool, or a connection string to make one; the rest have defaults. */
export interface PostgresStoreOptions {
  /**
   * A pg Pool you own; the store never ends it. Give it a `connectionTimeoutMillis` so a down
   * database fails fast. If it has no `'error'` listener the store adds one that logs, so that an
   * idle connection dying cannot end the process.
   */
  pool?: Pool;
  /** A connection string; the store then creates, tunes and ends its own pool. */
  connectionString?: string;
  /** The table, `name` or `schema.name`. Default `payhook_deliveries`. */
  table?: string;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Create the table (idempotent, safe when several processes start at once) before first use. Default true. */
  createTable?: boolean;
  /** Longest wait for a store query or a connection. Default 2000 ms, under the receiver's budget. */
  queryTimeoutMs?: number;
  /**
   * Longest a `transactional()` transaction may run, your effect included: past it the connection is
   * ended and the transaction rolled back (the server ends its backend too, through
   * `idle_in_transaction_session_timeout`), so one that a network partition silenced gives back its
   * connection and its row lock. Default 15000 ms, past the service's 10 s deadline; raise it for
   * a worker whose effects run longer.
   */
  transactionTimeoutMs?: number;
  /**
   * On first use, read the server's `synchronous_commit` and warn once when it is off: a crash
   * can then lose done records already answered 200. Default true.
   */
  checkDurability?: boolean;
  /** Keep a delivery ledger (`store.ledger`) in the table `<table>_ledger`: `true`, or its options (default 100,000 records and 10,000 refusals, 7 days). */
  ledger?: LedgerOptions | true;
  /**
   * Delete the rows past their retention (the ledger's too) from every process, from its first use: a run every hour
   * (the first after a random part of it), in batches of 10,000, at most 100,000 rows a run, one
   * process at a time. `false` if you schedule `store.purgeExpired()` yourself.
   */
  purge?: PurgeOptions | boolean;
  /**
   * Tell copies that wait for a running event when it ends, over `LISTEN`/`NOTIFY` on a connection
   * of the store's own, so that they need not ask again and again. Default true. Turn it off
   * behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`), which does not
   * carry notifications: waiting copies then ask again after growing pauses.
   */
  listen?: boolean;
  /**
   * Name the store's statements, so that each connection has Postgres parse and plan them once
   * rather than on every delivery (that was more than half of the server's time per claim). Default
   * true. Turn it off behind a pooler in transaction mode that does not track prepared statements
   * (PgBouncer before 1.21, or with `max_prepared_statements = 0`).
   */
  prepare?: boolean;
  /** @internal The purge's timers, for tests: a real, unref'd timer by default. */
  clock?: Clock;
}

export interface PostgresStore extends Store {
  /** The pool the store uses. */
  readonly pool: Pool;
  /** The quoted table name, for your own queries. */
  readonly table: string;
  /**
   * Wrap a database effect so that it commits in one transaction with the done record, fenced on
   * the claim token: both commit or neither, so a crash anywhere never runs it twice. Run every
   * statement of the effect on the `client` it is given. Make it the last handler of its event:
   * once it commits the event is done, and a later handler that throws is not retried.
   *
   * @example
   * receiver.on('payment.success', store.transactional(async (event, ctx, client) => {
   *   await client.query('update orders set paid_at = now() where id = $1', [event.merchantReference]);
   * }));
   */
  transactional<E extends PaymentEventName = PaymentEventName>(
    effect: TransactionalEffect<E>,
    options?: TransactionalOptions,
  ): EventHandler<E>;
  /**
   * A pg query config for `text`, named when the store's `prepare` is on, for an effect's statements
   * that run on every event: the connection then parses and plans them once. Keep the values out of
   * the text; a store names at most 64 texts and runs the rest unnamed.
   *
   * @example
   * await client.query(store.statement('update orders set paid_at = now() where id = $1', [event.merchantReference]));
   */
  statement(text: string, values?: unknown[]): pg.QueryConfig;
  /**
   * Delete every row past its retention (they already read as absent), the ledger's too, in batches; returns how
   * many. The store already does this every hour (the `purge` option); call it from your own
   * scheduler when you pass `purge: false`, or to purge at once.
   *
   * @example
   * const store = postgresStore({ connectionString: process.env.DATABASE_URL!, purge: false });
   * cron.schedule('17 3 * * *', () => store.purgeExpired().catch(console.error)); // your scheduler
   */
  purgeExpired(options?: { batchSize?: number }): Promise<number>;
  /**
   * Create the table now rather than before first use (a no-op when it exists), e.g. at boot so a
   * missing grant shows at once.
   *
   * @example
   * await store.createTable();
   */
  createTable(): Promise<void>;
  /** Stops the purge (waits for a run under way); ends the pool if the store created it from `connectionString`, not one you passed. */
  close(): Promise<void>;
}
