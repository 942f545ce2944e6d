import { randomUUID } from 'node:crypto';
import type { Clock } from '@payhook/core';
import { DEFAULT_RETENTION_MS, ledgerSettings, storedOutcome, storeLog, type LedgerOptions } from '@payhook/core/store';
import { groupedWrites, type Run } from './grouped-writes.js';
import { channelOf, keyListener } from './listener.js';
import type { EventHandler, PaymentEventName, Store } from '@payhook/core';
import type { ClaimResult, CompleteOptions, StoreRecord } from '@payhook/core/store';
import type pg from 'pg';
import type { Pool, QueryResultRow } from 'pg';
import { createSchema } from './create-schema.js';
import { postgresLedger } from './ledger/postgres-ledger.js';
import { createPool, hearIdleErrors, warnIfNotDurable } from './own-pool.js';
import { periodicPurge, purgeExpired, type PurgeOptions } from './purge.js';
import { DEFAULT_TABLE, quoteTable } from './schema.js';
import { columnOf, storeStatements } from './store-statements.js';
import { NAME, positiveMs, storeError } from './store-error.js';
import { statements } from './statement-names.js';
import { recentTokens, transactionalHandler, type TransactionalEffect, type TransactionalOptions } from './transactional.js';

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

/**
 * The store contract on PostgreSQL: a logged table keyed by the dedupe key; a claim, including
 * the takeover of a lapsed lease, is one `INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING`
 * statement. Times come from the database clock. `transactional()` commits a handler's own SQL
 * with the done record, for exactly-once effects even across crashes.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { postgresStore } from '@payhook/store-postgres';
 *
 * const store = postgresStore({ connectionString: process.env.DATABASE_URL! });
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET!, store });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const table = options.table ?? DEFAULT_TABLE;
  const { sql: t } = quoteTable(table);
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs');
  const timeoutMs = positiveMs(options.queryTimeoutMs ?? 2_000, 'queryTimeoutMs');
  const transactionMs = positiveMs(options.transactionTimeoutMs ?? 15_000, 'transactionTimeoutMs');
  const ledger = options.ledger && ledgerSettings(options.ledger, NAME, 100_000);
  const owned = !options.pool;
  const log = storeLog();
  const pool = options.pool ?? createPool(options.connectionString, timeoutMs, log);
  // A pool of yours with no 'error' listener would end the process when an idle connection dies.
  if (options.pool) hearIdleErrors(options.pool, log);
  const SQL = storeStatements(t, channelOf(table));
  const statement = statements(options.prepare !== false);
  // Tokens whose done record a transactional() handler just committed: the receiver's complete
  // that follows needs no statement of its own.
  const committed = recentTokens();
  const listener = options.listen === false ? undefined : keyListener(pool, channelOf(table), timeoutMs, log);

  let schemaReady: Promise<void> | undefined;
  // Every use of the store goes through here: the first starts the purge.
  const ensureTable = (): Promise<void> | undefined => {
    purge.start();
    if (options.createTable === false) return undefined;
    return (schemaReady ??= createSchema(pool, table, timeoutMs, !!ledger).catch((error) => {
      schemaReady = undefined;
      throw error;
    }));
  };
  const host = { pool, table, timeoutMs, ensureTable, log, ...(ledger && { ledger }) };
  const purge = periodicPurge(options.purge, host, options.clock);

  let durabilityChecked = options.checkDurability === false;
  const run: Run = async (text, values) => {
    await ensureTable();
    if (!durabilityChecked) {
      durabilityChecked = true;
      void warnIfNotDurable(pool, log);
    }
    return pool.query({ ...statement(text, values), query_timeout: timeoutMs } as pg.QueryConfig);
  };
  async function query<R extends QueryResultRow>(what: string, key: string, text: string, values: unknown[]) {
    try {
      return await run<R>(text, values);
    } catch (cause) {
      throw storeError(what, key, cause, table);
    }
  }
  const writes = groupedWrites(run, SQL, retentionMs);

  const store: PostgresStore = {
    pool,
    table: t,
    retentionMs,
    useLogger: log.use,
    ...(ledger && { ledger: postgresLedger(ledger, host, retentionMs) }),
    async claim(key: string, leaseMs: number): Promise<ClaimResult> {
      const lease = positiveMs(leaseMs, 'leaseMs');
      try {
        return await writes.claim({ key, token: randomUUID(), lease });
      } catch (cause) {
        throw storeError('claim', key, cause, table);
      }
    },
    async complete(key: string, token: string, opts: CompleteOptions = {}): Promise<boolean> {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs');
      // Its transaction marked it done with this token, which the statement would find and answer true.
      if (committed.take(token)) return true;
      try {
        return await writes.complete({ key, token, outcome: columnOf(opts.outcome), ttl });
      } catch (cause) {
        throw storeError('complete', key, cause, table);
      }
    },
    async release(key: string, token: string): Promise<boolean> {
      committed.take(token);
      return (await query('release', key, SQL.release, [key, token, retentionMs])).rowCount === 1;
    },
    async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
      return (await query('extend', key, SQL.extend, [key, token, positiveMs(leaseMs, 'leaseMs')])).rowCount === 1;
    },
    async get(key: string): Promise<StoreRecord | undefined> {
      const { rows } = await query<{
        state: 'claimed' | 'released' | 'done';
        attempt: number;
        outcome: string | null;
        completed_at: number | null;
        lease: number | null;
        leased: boolean | null;
      }>('read', key, SQL.get, [key]);
      const row = rows[0];
      if (!row) return undefined;
      if (row.state === 'done') {
        return { state: 'done', attempt: row.attempt, outcome: storedOutcome(row.outcome), completedAt: row.completed_at ?? 0 };
      }
      // A claim whose lease has lapsed is as good as released: the next claim takes it over.
      if (row.state === 'claimed' && row.leased) return { state: 'claimed', attempt: row.attempt, leaseExpiresAt: row.lease ?? 0 };
      return { state: 'released', attempt: row.attempt };
    },
    transactional<E extends PaymentEventName>(effect: TransactionalEffect<E>, opts?: TransactionalOptions): EventHandler<E> {
      return transactionalHandler(
        {
          pool,
          table,
          ensureTable,
          completeHeld: SQL.completeHeld,
          claimDone: SQL.claimDone,
          claim: (key, leaseMs) => store.claim(key, leaseMs),
          statement,
          committed: committed.add,
          retentionMs,
          limitMs: transactionMs,
          statementMs: timeoutMs,
        },
        effect,
        opts,
      );
    },
    statement,
    ...(listener && { watch: (key: string) => listener.watch(key) }),
    purgeExpired: (opts) => purgeExpired(host, opts),
    async createTable() {
      if (options.createTable === false) {
        try {
          await createSchema(pool, table, timeoutMs, !!ledger);
        } catch (cause) {
          throw storeError('create the table for', table, cause, table);
        }
        return;
      }
      await ensureTable();
    },
    async close() {
      await listener?.close();
      await purge.stop();
      if (owned) await pool.end();
    },
  };
  return store;
}
