import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { failedDoneTtl, isRefusal, pageSize, type Ledger, type ledgerSettings, type StoreLog } from '@payhook/core/store';
import type pg from 'pg';
import type { Pool, QueryResultRow } from 'pg';
import { ledgerTable } from '../sql/schema.js';
import { NAME, storeError } from '../base/store-error.js';
import { filters, ledgerStatements } from './ledger-statements.js';

/** What the store shares with its ledger and its purge: its pool, its table, its timeout, and the creation of both tables. */
export interface StoreHost {
  pool: Pool;
  table: string;
  timeoutMs: number;
  ensureTable: () => Promise<void> | undefined;
  /** Where the store's own lines go: the console, then the logger of the first receiver built on it. */
  log: StoreLog;
  /** The ledger's retentions, when the store keeps one: the purge drops its rows past them too. */
  ledger?: { retentionMs: number; deadLetterRetentionMs: number };
}

/**
 * The store's delivery ledger, in `<table>_ledger`: an append is one statement, which also drops
 * the records past the bounds (the accepted records and the refusals each against their own);
 * reads are one statement each, newest first by id. The store's purge drops what passes its
 * retention while nobody writes. Retention is timed by this process's clock, since `receivedAt`
 * comes from the receiver's, not the database's.
 *
 * @example
 * const ledger = postgresLedger(ledgerSettings(true, NAME, 100_000), { pool, table, timeoutMs: 2000, ensureTable });
 */
export function postgresLedger(settings: ReturnType<typeof ledgerSettings>, host: StoreHost, storeRetentionMs?: number): Ledger {
  const { pool, timeoutMs, ensureTable } = host;
  const { sql: t } = ledgerTable(host.table);
  const label = `${host.table}_ledger`;
  const { maxEntries, maxRefusals, retentionMs, deadLetterRetentionMs } = settings;
  const SQL = ledgerStatements(t);
  const appends = new Map<string, string>();
  // A count bound walks its bound's index entries to find the cut, so it runs once per 1% of the
  // bound written (by this process), and on the first append, in case the bound was lowered.
  const every = (max: number) => Math.max(1, Math.floor(max / 100));
  let sinceTrim = every(maxEntries);
  let sinceRefusalTrim = every(maxRefusals);

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
  const cutoffs = () => {
    const now = Date.now();
    return [now - retentionMs, now - deadLetterRetentionMs];
  };

  return {
    body: settings.body,
    ...(storeRetentionMs !== undefined && { failedDoneTtlMs: failedDoneTtl(storeRetentionMs, settings) }),
    async append(entries) {
      if (entries.length === 0) return;
      const refusals = entries.filter(isRefusal).length;
      const byCount = sinceTrim >= every(maxEntries);
      const byRefusals = sinceRefusalTrim >= every(maxRefusals);
      const key = `${byCount}${byRefusals}`;
      const text = appends.get(key) ?? appends.set(key, SQL.append(byCount, byRefusals)).get(key)!;
      const values = [toJson(entries), ...cutoffs(), ...(byCount ? [maxEntries] : []), ...(byRefusals ? [maxRefusals] : [])];
      await run('append records to', text, values);
      sinceTrim = (byCount ? 0 : sinceTrim) + entries.length - refusals;
      sinceRefusalTrim = (byRefusals ? 0 : sinceRefusalTrim) + refusals;
    },
    async update(id, patch) {
      // Only these two fields: a patch never rewrites the record's id, time or answer.
      const fields = toJson({ late: patch.late, deadLetter: patch.deadLetter });
      if (fields !== '{}') await run('update a record of', SQL.update, [pack(id), fields]);
    },
    async get(id) {
      return read((await run<{ entry: string }>('read a record of', SQL.get, [...cutoffs(), pack(id)])).rows)[0];
    },
    async list(query: LedgerQuery = {}) {
      const limit = pageSize(query, NAME);
      const [oldest, deadOldest] = cutoffs();
      const { where, values } = filters(query, oldest!, deadOldest!, pack);
      values.push(limit);
      const text = `SELECT entry::text AS entry FROM ${t} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`;
      return read((await run<{ entry: string }>('list the records of', text, values)).rows);
    },
    async remove(ids) {
      const unique = [...new Set(ids)].map(pack);
      let removed = 0;
      for (let i = 0; i < unique.length; i += 1000) {
        removed += (await run('remove records from', SQL.remove, [unique.slice(i, i + 1000)])).rowCount ?? 0;
      }
      return removed;
    },
  };
}

// jsonb refuses \u0000 and lone surrogates (text cannot hold them), so one such string (a body or
// a reference from an unsigned request) would fail its whole batch. They, and \u0001 which escapes
// them, are stored as \u0001 and four hex digits, and read back as they were.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and \x01 are what Postgres cannot store and the escape uses
const UNSTORABLE = /[\0\x01\uD800-\uDFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and \x01 are what Postgres cannot store and the escape uses
const UNSTORABLE_ALL = /[\0\x01]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const pack = (s: string) =>
  UNSTORABLE.test(s) ? s.replace(UNSTORABLE_ALL, (c) => `\x01${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s;
// biome-ignore lint/suspicious/noControlCharactersInRegex: \x01 starts the escape written by pack
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
