import { DEFAULT_RETENTION_MS, ledgerSettings, storeLog } from '@payhook/core/store';
import type { ClaimResult, CompleteOptions, Ledger, LedgerOptions, Outcome, Store, StoreRecord } from '@payhook/core/store';
import { driverOf, inTransaction, NAME, openDatabase } from './driver.js';
import { claimStatements } from './schema.js';
import { sqliteLedger } from './sqlite-ledger.js';

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

interface Row {
  state: 'claimed' | 'released' | 'done';
  attempt: number;
  token: string | null;
  lease_until: number | null;
  outcome: Outcome | 'failed' | null;
  completed_at: number | null;
  expires_at: number;
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
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs');
  const busyTimeoutMs = positiveMs(options.busyTimeoutMs ?? 2_000, 'busyTimeoutMs');
  const settings = options.ledger ? ledgerSettings(options.ledger, NAME, 100_000) : undefined;
  const now = options.now ?? Date.now;
  const db = openDatabase(driverOf(options.driver), path, busyTimeoutMs);
  const sql = claimStatements(db, table);
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

  const purgeExpired = (limit = 1_000) => call('purge', table, () => Number(sql.purge.run(now(), limit).changes));
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
      const lease = positiveMs(leaseMs, 'leaseMs');
      return call('claim', key, (): ClaimResult => {
        const t = now();
        return inTransaction(db, () => {
          const row = sql.read.get(key) as Row | undefined;
          const live = row !== undefined && row.expires_at > t ? row : undefined;
          if (live?.state === 'done') return { status: 'done', outcome: outcomeOf(live.outcome), completedAt: live.completed_at! };
          if (live?.state === 'claimed' && live.lease_until! > t) return { status: 'in-progress', leaseExpiresAt: live.lease_until! };
          // A released or lapsed claim keeps its attempt count: the next run is a redelivery.
          const attempt = (live?.attempt ?? 0) + 1;
          const token = crypto.randomUUID();
          sql.claim.run(key, attempt, token, t + lease, t + Math.max(retentionMs, lease));
          return { status: 'claimed', token, attempt };
        });
      });
    },
    complete(key, token, opts: CompleteOptions = {}) {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs');
      return call('complete', key, () => {
        const t = now();
        if (Number(sql.complete.run(outcomeOf(opts.outcome), t, t + ttl, key, token, t).changes) === 1) return true;
        // Idempotent for the token that completed it: a retried complete whose first answer was lost.
        return sql.completedBy.get(key, token, t) !== undefined;
      });
    },
    release(key, token) {
      return call('release', key, () => {
        const t = now();
        return Number(sql.release.run(t + retentionMs, key, token, t).changes) === 1;
      });
    },
    extend(key, token, leaseMs) {
      const lease = positiveMs(leaseMs, 'leaseMs');
      return call('extend', key, () => {
        const t = now();
        // The record must outlive its lease, or a lapsed claim would forget its attempt count.
        return Number(sql.extend.run(t + lease, t + lease, key, token, t).changes) === 1;
      });
    },
    get(key) {
      return call('read', key, (): StoreRecord | undefined => {
        const t = now();
        const row = sql.read.get(key) as Row | undefined;
        if (!row || row.expires_at <= t) return undefined;
        if (row.state === 'done')
          return { state: 'done', attempt: row.attempt, outcome: outcomeOf(row.outcome), completedAt: row.completed_at! };
        if (row.state === 'claimed' && row.lease_until! > t)
          return { state: 'claimed', attempt: row.attempt, leaseExpiresAt: row.lease_until! };
        return { state: 'released', attempt: row.attempt };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(purging);
      db.close();
    },
  };
}

/** `rejected`, or `failed` as earlier versions named it, reads as `rejected`; anything else is `ok`. */
const outcomeOf = (stored: unknown): Outcome => (stored === 'rejected' || stored === 'failed' ? 'rejected' : 'ok');

function positiveMs(value: number, option: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${NAME} ${option} must be a positive number of milliseconds; got ${value}.`);
  }
  return Math.ceil(value);
}
