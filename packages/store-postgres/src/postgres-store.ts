import { randomUUID } from 'node:crypto';
import { DEFAULT_RETENTION_MS, ledgerSettings, storedOutcome, storeLog } from '@payhook/core/store';
import { groupedWrites, type Run } from './grouped-writes.js';
import { channelOf, keyListener } from './listener.js';
import type { EventHandler, PaymentEventName } from '@payhook/core';
import type { ClaimResult, CompleteOptions, StoreRecord } from '@payhook/core/store';
import type pg from 'pg';
import type { QueryResultRow } from 'pg';
import { createSchema } from './sql/create-schema.js';
import { postgresLedger } from './ledger/postgres-ledger.js';
import { createPool, hearIdleErrors, warnIfNotDurable } from './own-pool.js';
import { periodicPurge, purgeExpired } from './purge.js';
import { checkReplication, watchPrimary } from './replication.js';
import { DEFAULT_TABLE, quoteTable } from './sql/schema.js';
import { columnOf, storeStatements } from './sql/store-statements.js';
import { NAME, positiveMs, storeError } from './base/store-error.js';
import { statements } from './sql/statement-names.js';
import type { PostgresStore, PostgresStoreOptions } from './store-api.js';
import { recentTokens, transactionalHandler, type TransactionalEffect, type TransactionalOptions } from './transactional.js';

export type { PostgresStore, PostgresStoreOptions } from './store-api.js';

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
  // Nobody listens with `listen: false`: then no NOTIFY, whose lock would make commits take turns.
  const SQL = storeStatements(t, options.listen === false ? undefined : channelOf(table));
  const statement = statements(options.prepare !== false);
  // Tokens whose done record a transactional() handler just committed: the receiver's complete
  // that follows needs no statement of its own.
  const committed = recentTokens();
  // Every new connection says who the primary is: a failover to a standby is noticed and logged.
  const primaryOk = watchPrimary(pool, log);
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
    // Before the table: a commit that waits for a standby that is not there would hold the check back.
    if (!durabilityChecked) {
      durabilityChecked = true;
      void warnIfNotDurable(pool, log).then(() => checkReplication(pool, log, options.listen !== false));
    }
    await ensureTable();
    const result = await pool.query({ ...statement(text, values), query_timeout: timeoutMs } as pg.QueryConfig);
    primaryOk();
    return result;
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
