import type { Clock } from '@payhook/core';
import { systemClock } from '@payhook/core/store';
import type pg from 'pg';
import type { StoreHost } from './ledger/postgres-ledger.js';
import { ledgerTable, quoteTable } from './sql/schema.js';
import { MAX_TIMER_MS, NAME, positiveMs, storeError } from './base/store-error.js';

/** The store's periodic purge of the rows past their retention: the `purge` option of `postgresStore()`. */
export interface PurgeOptions {
  /** How often each process tries a run; the first comes after a random part of it. Default 1 hour. */
  everyMs?: number;
  /** Rows per `DELETE`, each its own short transaction. Default 10,000. */
  batchSize?: number;
  /** The most rows one run deletes; a backlog drains over several runs. Default 100,000. */
  maxRowsPerRun?: number;
}

/** Starts the periodic purge on the store's first use, and stops it on `close()`. */
export interface PeriodicPurge {
  start(): void;
  stop(): Promise<void>;
}

// A batch of 10,000 is one DELETE of about 50 ms (measured on 500,000 rows, with the index on
// expires_at); a run of 100,000 is ten of them, about half a second in all, and no lock outlives
// its batch. Hourly, that is 2.4 million rows a day, far past a merchant's inflow of deliveries.
const DEFAULTS: Required<PurgeOptions> = { everyMs: 60 * 60 * 1000, batchSize: 10_000, maxRowsPerRun: 100_000 };
// A purge runs outside any delivery's budget: it gets longer than the store's query timeout.
const PURGE_TIMEOUT_MS = 30_000;

/**
 * At most `$1` rows past their retention, found through the index on `expires_at` (the cutoff is
 * read once, so the index bounds the scan; `clock_timestamp()` in the condition would be checked
 * row by row, over the whole table). SKIP LOCKED: a row a claim is taking over is left for later.
 * `locked`: only while holding the table's purge lock, a transaction-level advisory lock taken in
 * the statement itself, so it ends with the batch, whatever happens to the connection, and works
 * behind PgBouncer's transaction pooling; without it the statement deletes nothing and `got` is false.
 */
function purgeSql(t: string, locked: boolean): string {
  const lock = locked ? `(SELECT got FROM lock)` : 'true';
  return `
    ${locked ? 'WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext($2)) AS got),' : 'WITH'}
    gone AS (
      DELETE FROM ${t} WHERE key = ANY(ARRAY(
        SELECT key FROM ${t} WHERE expires_at <= (SELECT clock_timestamp()) AND ${lock}
        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))
      RETURNING 1)
    SELECT ${lock} AS got, (SELECT count(*) FROM gone)::int AS deleted`;
}

/**
 * The ledger's rows past their retention, as `purgeSql` for the store's table: `$3` is the oldest
 * `receivedAt` kept, `$4` the oldest kept of an open dead letter (the process's clock, which wrote
 * `receivedAt`). The appends trim the ledger as it is written; this drops what expires while nobody writes.
 */
function ledgerPurgeSql(t: string, locked: boolean): string {
  const lock = locked ? `(SELECT got FROM lock)` : 'true';
  const [oldest, deadOldest] = locked ? ['$3', '$4'] : ['$2', '$3'];
  return `
    ${locked ? 'WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext($2)) AS got),' : 'WITH'}
    gone AS (
      DELETE FROM ${t} WHERE id = ANY(ARRAY(
        SELECT id FROM ${t} WHERE received_at < ${oldest} AND (NOT open_dead OR received_at < ${deadOldest}) AND ${lock}
        ORDER BY received_at LIMIT $1 FOR UPDATE SKIP LOCKED))
      RETURNING 1)
    SELECT ${lock} AS got, (SELECT count(*) FROM gone)::int AS deleted`;
}

/** What a run deletes, in turn: the store's expired rows, then the ledger's when the store keeps one; each with the values after the row limit (and the lock's key). */
function purges(host: StoreHost, locked: boolean, now: () => number): { text: string; values: () => unknown[] }[] {
  const claims = { text: purgeSql(quoteTable(host.table).sql, locked), values: () => [] };
  const { ledger } = host;
  if (!ledger) return [claims];
  const values = () => [now() - ledger.retentionMs, now() - ledger.deadLetterRetentionMs];
  return [claims, { text: ledgerPurgeSql(ledgerTable(host.table).sql, locked), values }];
}

async function deleteBatch(host: StoreHost, text: string, values: unknown[]): Promise<{ got: boolean; deleted: number }> {
  await host.ensureTable();
  const config = { text, values, query_timeout: Math.max(host.timeoutMs, PURGE_TIMEOUT_MS) } as pg.QueryConfig;
  const { rows } = await host.pool.query<{ got: boolean; deleted: number }>(config);
  return rows[0] ?? { got: true, deleted: 0 };
}

/**
 * `store.purgeExpired()`: every row past its retention, in batches of `batchSize`, without the
 * purge lock (SKIP LOCKED keeps it apart from a periodic run going on at the same time).
 *
 * @example
 * const deleted = await purgeExpired(host, { batchSize: 10_000 });
 */
export async function purgeExpired(host: StoreHost, { batchSize = DEFAULTS.batchSize } = {}): Promise<number> {
  const size = positiveMs(batchSize, 'batchSize', 'rows');
  let total = 0;
  for (const { text, values } of purges(host, false, Date.now)) {
    for (;;) {
      let deleted: number;
      try {
        ({ deleted } = await deleteBatch(host, text, [size, ...values()]));
      } catch (cause) {
        throw storeError('purge the expired rows of', host.table, cause, host.table);
      }
      total += deleted;
      if (deleted < size) break;
    }
  }
  return total;
}

/**
 * The `purge` option: once started, a run every `everyMs` on `clock` (a real, unref'd timer by
 * default, so it never keeps the process alive), the first after a random part of `everyMs` so
 * that processes started together spread out. The next run is set only when one ends, so runs
 * never overlap; across processes the purge lock lets one batch run at a time, and a run that
 * finds it taken ends (another process is purging). A failure is logged once until a run
 * succeeds, and never thrown. The timer's callback returns the run, for tests to await.
 *
 * @example
 * const purge = periodicPurge(options.purge, host);
 * purge.start(); // on first use
 * await purge.stop(); // in close()
 */
export function periodicPurge(option: PurgeOptions | boolean | undefined, host: StoreHost, clock: Clock = systemClock): PeriodicPurge {
  if (option === false) return { start() {}, async stop() {} };
  const { everyMs, batchSize, maxRowsPerRun } = settings(option === true ? {} : (option ?? {}));
  const steps = purges(host, true, () => clock.now());
  const lockKey = `@payhook/store-postgres:purge:${host.table}`;
  let state: 'idle' | 'armed' | 'stopped' = 'idle';
  let timer: unknown;
  let running: Promise<void> | undefined;
  let failing = false;

  async function run(): Promise<void> {
    try {
      // Each step (the store's rows, the ledger's) up to maxRowsPerRun; a run that finds the lock taken ends.
      eachStep: for (const { text, values } of steps) {
        for (let total = 0; total < maxRowsPerRun && state !== 'stopped'; ) {
          const limit = Math.min(batchSize, maxRowsPerRun - total);
          const { got, deleted } = await deleteBatch(host, text, [limit, lockKey, ...values()]);
          total += deleted;
          if (!got) break eachStep;
          if (deleted < limit) break;
        }
      }
      failing = false;
    } catch (cause) {
      if (!failing) logFailure(host, everyMs, cause);
      failing = true;
    }
  }
  const tick = (): Promise<void> | undefined => {
    if (state === 'stopped') return undefined;
    running = run().finally(() => {
      running = undefined;
      if (state !== 'stopped') timer = clock.setTimeout(tick, everyMs);
    });
    return running;
  };

  return {
    start() {
      if (state !== 'idle') return;
      state = 'armed';
      timer = clock.setTimeout(tick, Math.floor(Math.random() * everyMs));
    },
    async stop() {
      state = 'stopped';
      clock.clearTimeout(timer);
      await running;
    },
  };
}

function settings(options: PurgeOptions): Required<PurgeOptions> {
  const s = { ...DEFAULTS, ...options };
  const everyMs = positiveMs(s.everyMs, 'purge.everyMs');
  if (everyMs > MAX_TIMER_MS) {
    throw new RangeError(
      `${NAME} purge.everyMs must be at most ${MAX_TIMER_MS} ms (24.8 days), the longest timer Node keeps; got ${everyMs}.`,
    );
  }
  return {
    everyMs,
    batchSize: positiveMs(s.batchSize, 'purge.batchSize', 'rows'),
    maxRowsPerRun: positiveMs(s.maxRowsPerRun, 'purge.maxRowsPerRun', 'rows'),
  };
}

function logFailure({ table, log }: StoreHost, everyMs: number, error: unknown): void {
  // The package's own errors (the table could not be created) carry the database's as their cause.
  const own = error instanceof Error && error.message.startsWith(NAME) && error.cause !== undefined;
  const cause = own ? error.cause : error;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const fix =
    (cause as { code?: unknown } | null)?.code === '42P01'
      ? `The table ${table} does not exist: create it from the package's schema.sql, or leave createTable on and restart.`
      : 'Check that Postgres is running and reachable at the configured URL (DATABASE_URL).';
  log.error(
    `${NAME} the periodic purge could not delete the expired rows of ${table} (${reason}). Deliveries are not affected; it tries again in ${+(everyMs / 60_000).toFixed(1)} min. ${fix} Logged once until a purge succeeds.`,
  );
}
