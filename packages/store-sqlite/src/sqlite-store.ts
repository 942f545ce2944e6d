import { DEFAULT_RETENTION_MS, ledgerSettings, positiveMs, storedOutcome, storeLog } from '@payhook/core/store';
import type { CompleteOptions, Ledger, LedgerOptions, Store } from '@payhook/core/store';
import { driverOf, inTransaction, NAME, openDatabase } from './driver.js';
import { createPrivate } from './private-file.js';
import { claimsOver } from './claims.js';
import { sqliteLedger } from './sqlite-ledger.js';

/** What `sqliteStore` takes: the database file; the rest have defaults. */
export interface SqliteStoreOptions {
  /** The database file, made if absent; `<path>-wal` and `<path>-shm` sit beside it. Every process on the machine that receives deliveries opens the same one. */
  path: string;
  /**
   * better-sqlite3's `Database` (`import Database from 'better-sqlite3'`), or `node:sqlite`'s
   * `DatabaseSync`. Default `node:sqlite` where the runtime has it (Node 22.13 and later); on
   * Node 20, install better-sqlite3 12 and pass it.
   */
  driver?: unknown;
  /** The claims' table; the ledger's is `<table>_ledger`. Default `payhook_deliveries`. */
  table?: string;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Longest wait for another process's write to the file. Default 2000 ms, under the receiver's budget. */
  busyTimeoutMs?: number;
  /**
   * Keep a delivery ledger beside the claims (`store.ledger`), for `payhook deliveries`, replay
   * and dead letters: `true` for the defaults (bodies kept, 100,000 records and 10,000 refusals,
   * 7 days), or bounds of your own.
   */
  ledger?: LedgerOptions | true;
  /** The clock, epoch ms, for tests. Default `Date.now`. Every process on one file must read the same clock. */
  now?: () => number;
}

export interface SqliteStore extends Store {
  /** Deletes records past their retention, at most `limit` at once; resolves to how many. The store also does it hourly. */
  purgeExpired(limit?: number): Promise<number>;
  /** Stops the hourly purge and closes the file. */
  close(): Promise<void>;
  readonly ledger?: Ledger;
}

const HOUR = 60 * 60 * 1000;

/**
 * The store contract in one SQLite file, for a merchant on one machine with no Redis or Postgres:
 * done records survive a restart and a `kill -9`, and the processes of the machine share claims
 * through the file. A claim is one write transaction (BEGIN IMMEDIATE), complete, release and
 * extend one statement each; every commit is on disk before it is answered. Calls are
 * synchronous inside: a write waits at most `busyTimeoutMs` for another process's.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { sqliteStore } from '@payhook/store-sqlite';
 *
 * const store = sqliteStore({ path: '/var/lib/shop/payhook.db', ledger: true });
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET!, store });
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { path } = options;
  if (typeof path !== 'string' || path.trim() === '' || path === ':memory:' || path.startsWith('file::memory:')) {
    throw new TypeError(
      `${NAME} path must be a database file that every receiving process opens, like "/var/lib/shop/payhook.db"; got ${JSON.stringify(path ?? null)}. For one process's memory, use memoryStore() from @payhook/core.`,
    );
  }
  const table = options.table ?? 'payhook_deliveries';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,54}$/.test(table)) {
    throw new TypeError(
      `${NAME} table must be a plain SQL name (letters, digits, _; at most 55 characters); got ${JSON.stringify(table)}.`,
    );
  }
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs', NAME);
  const busyTimeoutMs = positiveMs(options.busyTimeoutMs ?? 2_000, 'busyTimeoutMs', NAME);
  const settings = options.ledger ? ledgerSettings(options.ledger, NAME, 100_000) : undefined;
  const now = options.now ?? Date.now;
  const Driver = driverOf(options.driver);
  createPrivate(path);
  const db = openDatabase(Driver, path, busyTimeoutMs);
  const claims = claimsOver(db, { table, now, transaction: (fn) => inTransaction(db, fn) });
  const log = storeLog();
  let closed = false;

  const call = <T>(what: string, key: string, fn: () => T): Promise<T> => {
    try {
      if (closed) throw new Error('the store was closed');
      return Promise.resolve(fn());
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      return Promise.reject(
        new Error(
          `${NAME} could not ${what} "${key}" in ${path} (${reason}). The receiver answers 503 so the service retries; check that the file is writable and that no other program holds it locked longer than busyTimeoutMs (${busyTimeoutMs} ms).`,
          { cause },
        ),
      );
    }
  };

  const purgeExpired = (limit = 1_000) => call('purge', table, () => claims.purge(limit));
  const purging = setInterval(() => {
    purgeExpired().catch((error: Error) =>
      log.error(`${NAME} the hourly purge of ${path} failed (${error.message}); it runs again in an hour.`),
    );
  }, HOUR);
  purging.unref?.();

  return {
    retentionMs,
    useLogger: log.use,
    purgeExpired,
    ...(settings && { ledger: sqliteLedger(db, table, settings, { now, path, retentionMs }) }),
    claim(key, leaseMs) {
      const lease = positiveMs(leaseMs, 'leaseMs', NAME);
      return call('claim', key, () => claims.claim(key, lease, retentionMs));
    },
    complete(key, token, opts: CompleteOptions = {}) {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs', NAME);
      return call('complete', key, () => claims.complete(key, token, storedOutcome(opts.outcome), ttl));
    },
    release(key, token) {
      return call('release', key, () => claims.release(key, token, retentionMs));
    },
    extend(key, token, leaseMs) {
      const lease = positiveMs(leaseMs, 'leaseMs', NAME);
      return call('extend', key, () => claims.extend(key, token, lease));
    },
    get(key) {
      return call('read', key, () => claims.get(key));
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(purging);
      db.close();
    },
  };
}
