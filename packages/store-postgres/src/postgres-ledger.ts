import { pageSize, type Ledger, type LedgerEntry, type LedgerQuery, type ledgerSettings } from '@payhook/core';
import type pg from 'pg';
import type { Pool, QueryResultRow } from 'pg';
import { ledgerTable } from './schema.js';
import { NAME, storeError } from './store-error.js';

/** What the store shares with its ledger and its purge: its pool, its table, its timeout, and the creation of both tables. */
export interface StoreHost {
  pool: Pool;
  table: string;
  timeoutMs: number;
  ensureTable: () => Promise<void> | undefined;
}

/**
 * The store's delivery ledger, in `<table>_ledger`: an append is one statement, which also drops
 * the records past the bounds; reads are one statement each, newest first by id. Retention is
 * timed by this process's clock, since `receivedAt` comes from the receiver's, not the database's.
 *
 * @example
 * const ledger = postgresLedger(ledgerSettings(true, NAME, 100_000), { pool, table, timeoutMs: 2000, ensureTable });
 */
export function postgresLedger(settings: ReturnType<typeof ledgerSettings>, host: StoreHost): Ledger {
  const { pool, timeoutMs, ensureTable } = host;
  const { sql: t } = ledgerTable(host.table);
  const label = `${host.table}_ledger`;
  const { maxEntries, retentionMs } = settings;
  const SQL = ledgerStatements(t);
  // The count bound walks maxEntries index entries to find the cut, so it runs once per 1% of the
  // bound written (by this process), and on the first append, in case the bound was lowered.
  const trimEvery = Math.max(1, Math.floor(maxEntries / 100));
  let sinceTrim = trimEvery;

  async function run<R extends QueryResultRow>(what: string, text: string, values: unknown[]) {
    try {
      await ensureTable();
      // Unnamed statements: named ones would break behind PgBouncer's transaction pooling.
      return await pool.query<R>({ text, values, query_timeout: timeoutMs } as pg.QueryConfig);
    } catch (cause) {
      throw ledgerError(what, label, cause);
    }
  }
  const read = (rows: { entry: string }[]) => rows.map((r) => fromJson(r.entry));
  const oldest = () => Date.now() - retentionMs;

  return {
    body: settings.body,
    async append(entries) {
      if (entries.length === 0) return;
      const byCount = sinceTrim >= trimEvery;
      const values = [toJson(entries), oldest(), ...(byCount ? [maxEntries] : [])];
      const { rows } = await run<{ added: number }>('append records to', byCount ? SQL.appendTrim : SQL.append, values);
      sinceTrim = (byCount ? 0 : sinceTrim) + (rows[0]?.added ?? 0);
    },
    async update(id, patch) {
      // Only these two fields: a patch never rewrites the record's id, time or answer.
      const fields = toJson({ late: patch.late, deadLetter: patch.deadLetter });
      if (fields !== '{}') await run('update a record of', SQL.update, [pack(id), fields]);
    },
    async get(id) {
      return read((await run<{ entry: string }>('read a record of', SQL.get, [oldest(), pack(id)])).rows)[0];
    },
    async list(query: LedgerQuery = {}) {
      const limit = pageSize(query, NAME);
      const { where, values } = filters(query, oldest());
      values.push(limit);
      const text = `SELECT entry::text AS entry FROM ${t} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`;
      return read((await run<{ entry: string }>('list the records of', text, values)).rows);
    },
  };
}

const DROP_AT_ONCE = 10_000;

/** The statements of the ledger in the quoted table `t`; `$2` is the oldest `receivedAt` kept. */
function ledgerStatements(t: string) {
  const insert = `INSERT INTO ${t} (entry) SELECT e FROM jsonb_array_elements($1::jsonb) AS e ON CONFLICT (id) DO NOTHING RETURNING 1`;
  // Rows past a bound, oldest first, never an open dead letter, at most DROP_AT_ONCE: a backlog (a
  // ledger idle past its retention, a lowered bound) drains over several appends rather than timing
  // each out. SKIP LOCKED: processes trimming at once neither wait nor deadlock. `= ANY(ARRAY(…))`
  // deletes through the primary key, where `IN (…)` can get a plan that reads the whole table.
  const drop = (past: string, order: string) =>
    `DELETE FROM ${t} WHERE id = ANY(ARRAY(
      SELECT id FROM ${t} WHERE ${past} AND NOT open_dead ORDER BY ${order} LIMIT ${DROP_AT_ONCE} FOR UPDATE SKIP LOCKED))`;
  // One round trip: insert the batch (a retried batch inserts nothing twice) and drop what is past
  // the bounds. The deletes see the table as it was before this batch: the count bound lags one batch.
  // `over` leaves the expired rows to `old`; its `+ 0` keeps the time index, which would have it
  // read every row the index holds, out of its plan: it walks the primary key from the oldest id.
  const append = (byCount: boolean) => `
    WITH old AS (${drop('received_at < $2', 'received_at')}),
    ${byCount ? `cut AS (SELECT id FROM ${t} ORDER BY id DESC OFFSET $3 LIMIT 1),
    over AS (${drop('id <= (SELECT id FROM cut) AND received_at + 0 >= $2', 'id')}),` : ''}
    added AS (${insert})
    SELECT count(*)::int AS added FROM added`;
  return {
    append: append(false),
    appendTrim: append(true),
    // `||` replaces top-level fields whole: a new deadLetter replaces the old one, retriedBy and all.
    update: `UPDATE ${t} SET entry = entry || $2::jsonb WHERE id = $1`,
    get: `SELECT entry::text AS entry FROM ${t} WHERE id = $2 AND (received_at >= $1 OR open_dead)`,
  };
}

/** The WHERE clause of a list: the records still kept, and every filter the query sets (the same as matchesQuery). */
function filters(q: LedgerQuery, oldest: number) {
  const where = ['(received_at >= $1 OR open_dead)'];
  const values: unknown[] = [oldest];
  const add = (value: unknown, sql: (p: string) => string) => {
    values.push(typeof value === 'string' ? pack(value) : value);
    where.push(sql(`$${values.length}`));
  };
  if (q.reference !== undefined) add(q.reference, (p) => `reference = ${p}`);
  if (q.event !== undefined) add(q.event, (p) => `event = ${p}`);
  if (q.outcome !== undefined) add(q.outcome, (p) => `(outcome = ${p} OR late_outcome = ${p})`);
  if (q.since !== undefined) add(q.since, (p) => `received_at >= ${p}`);
  if (q.until !== undefined) add(q.until, (p) => `received_at < ${p}`);
  if (q.before !== undefined) add(q.before, (p) => `id < ${p}`);
  if (q.deadLetters === 'all') where.push('dead');
  // `dead` too, though open_dead implies it: so that the planner takes the dead letters' index.
  if (q.deadLetters === 'open') where.push('dead AND open_dead');
  return { where, values };
}

// jsonb refuses \u0000 and lone surrogates (text cannot hold them), so one such string (a body or
// a reference from an unsigned request) would fail its whole batch. They, and \u0001 which escapes
// them, are stored as \u0001 and four hex digits, and read back as they were.
const UNSTORABLE = /[\0\x01\uD800-\uDFFF]/;
const UNSTORABLE_ALL = /[\0\x01]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const pack = (s: string) => (UNSTORABLE.test(s) ? s.replace(UNSTORABLE_ALL, (c) => `\x01${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s);
const unpack = (s: string) => s.replace(/\x01([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
const toJson = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? pack(v) : v));
const fromJson = (text: string): LedgerEntry =>
  // Postgres writes \u0001 as that escape: only then is there anything to read back.
  text.includes('\\u0001') ? JSON.parse(text, (_key, v: unknown) => (typeof v === 'string' ? unpack(v) : v)) : JSON.parse(text);

/** A failed ledger query: what failed, why, and what to do; a missing table gets the store's advice. */
function ledgerError(what: string, table: string, cause: unknown): Error {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === '42P01' || (cause instanceof Error && cause.message.startsWith(NAME))) return storeError(what, table, cause, table);
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `${NAME} could not ${what} the ledger ${table} (${reason}). Check that Postgres is running and reachable at the configured URL (DATABASE_URL); the receiver writes to the ledger after its answers, so deliveries are answered all the same.`,
    { cause },
  );
}
