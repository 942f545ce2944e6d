import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { failedDoneTtl, isOpenDeadLetter, isRefusal, pageSize, type Ledger, type ledgerSettings } from '@payhook/core/store';
import { type Connection, inTransaction, NAME } from './driver.js';
import { ledgerTable } from './schema.js';

interface Host {
  now: () => number;
  path: string;
  /** The store's retention: a dead-lettered event's done record is kept past its open dead letter. */
  retentionMs: number;
}

/** Most ids one statement deletes. */
const CHUNK = 500;

/**
 * The delivery ledger in `<table>_ledger`, in the store's file. An append is one transaction that
 * inserts the batch and drops what is past the bounds: the retention (open dead letters by their
 * own), the accepted records past `maxEntries` and the refusals past `maxRefusals`, each counted
 * apart, so a flood of refusals never pushes out an accepted record or a dead letter.
 */
export function sqliteLedger(db: Connection, table: string, settings: ReturnType<typeof ledgerSettings>, host: Host): Ledger {
  const t = `${table}_ledger`;
  ledgerTable(db, t);
  const { maxEntries, maxRefusals, retentionMs, deadLetterRetentionMs } = settings;
  const columns = 'id, received_at, account, reference, event, outcome, late_outcome, dead, open_dead, refused, entry';
  const kept = '(received_at >= ? OR (open_dead = 1 AND received_at >= ?))';
  const SQL = {
    insert: db.prepare(`INSERT OR IGNORE INTO "${t}" (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    rewrite: db.prepare(`UPDATE "${t}" SET late_outcome = ?, dead = ?, open_dead = ?, entry = ? WHERE id = ?`),
    entry: db.prepare(`SELECT entry FROM "${t}" WHERE id = ?`),
    get: db.prepare(`SELECT entry FROM "${t}" WHERE id = ? AND ${kept}`),
    old: db.prepare(`DELETE FROM "${t}" WHERE received_at < ? AND (open_dead = 0 OR received_at < ?)`),
    // The (max+1)th newest of each kind, and everything at or below it but the open dead letters.
    overCount: db.prepare(
      `DELETE FROM "${t}" WHERE refused = 0 AND open_dead = 0 AND id <= (SELECT id FROM "${t}" WHERE refused = 0 ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    ),
    overRefusals: db.prepare(
      `DELETE FROM "${t}" WHERE refused = 1 AND id <= (SELECT id FROM "${t}" WHERE refused = 1 ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    ),
  };
  const cutoffs = () => {
    const now = host.now();
    return [now - retentionMs, now - deadLetterRetentionMs] as const;
  };
  const run = <T>(what: string, fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      return Promise.reject(
        new Error(
          `${NAME} could not ${what} the ledger ${t} in ${host.path} (${reason}). The receiver writes to the ledger after its answers, so deliveries are answered all the same; check that the file is writable.`,
          { cause },
        ),
      );
    }
  };
  const write = (e: LedgerEntry) =>
    SQL.insert.run(
      e.id,
      e.receivedAt,
      e.account ?? null,
      e.reference ?? null,
      e.event ?? null,
      e.outcome,
      e.late?.outcome ?? null,
      e.deadLetter ? 1 : 0,
      isOpenDeadLetter(e) ? 1 : 0,
      isRefusal(e) ? 1 : 0,
      JSON.stringify(e),
    );
  const read = (rows: unknown[]) => rows.map((r) => JSON.parse((r as { entry: string }).entry) as LedgerEntry);

  return {
    body: settings.body,
    failedDoneTtlMs: failedDoneTtl(host.retentionMs, settings),
    append(entries) {
      return run('append records to', () => {
        if (entries.length === 0) return;
        inTransaction(db, () => {
          for (const e of entries) write(e);
          SQL.old.run(...cutoffs());
          SQL.overCount.run(maxEntries);
          SQL.overRefusals.run(maxRefusals);
        });
      });
    },
    update(id, patch) {
      return run('update a record of', () => {
        // Only these two fields, each replaced whole: a patch never rewrites the record's id, time or answer.
        if (patch.late === undefined && patch.deadLetter === undefined) return;
        inTransaction(db, () => {
          const row = SQL.entry.get(id) as { entry: string } | undefined;
          if (!row) return;
          const e = { ...(JSON.parse(row.entry) as LedgerEntry) };
          if (patch.late !== undefined) e.late = patch.late;
          if (patch.deadLetter !== undefined) e.deadLetter = patch.deadLetter;
          SQL.rewrite.run(e.late?.outcome ?? null, e.deadLetter ? 1 : 0, isOpenDeadLetter(e) ? 1 : 0, JSON.stringify(e), id);
        });
      });
    },
    get(id) {
      return run('read a record of', () => read([SQL.get.get(id, ...cutoffs())].filter(Boolean))[0]);
    },
    list(query: LedgerQuery = {}) {
      // A bad page size rejects, as every ledger's list does, with core's message.
      let limit: number;
      try {
        limit = pageSize(query, NAME);
      } catch (error) {
        return Promise.reject(error);
      }
      return run('list the records of', () => {
        const { where, values } = filters(query, cutoffs());
        return read(db.prepare(`SELECT entry FROM "${t}" WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...values, limit));
      });
    },
    remove(ids) {
      return run('remove records from', () => {
        const unique = [...new Set(ids)];
        let removed = 0;
        for (let i = 0; i < unique.length; i += CHUNK) {
          const chunk = unique.slice(i, i + CHUNK);
          const statement = db.prepare(`DELETE FROM "${t}" WHERE id IN (${chunk.map(() => '?').join(', ')})`);
          removed += Number(statement.run(...chunk).changes);
        }
        return removed;
      });
    },
  };
}

/** The WHERE clause of a list: the records still kept, and every filter the query sets (the same as core's matchesQuery). */
function filters(q: LedgerQuery, [oldest, deadOldest]: readonly [number, number]) {
  const where = ['(received_at >= ? OR (open_dead = 1 AND received_at >= ?))'];
  const values: unknown[] = [oldest, deadOldest];
  const add = (value: unknown, sql: string) => {
    values.push(value);
    where.push(sql);
  };
  if (q.account !== undefined) add(q.account, 'account = ?');
  if (q.reference !== undefined) add(q.reference, 'reference = ?');
  if (q.event !== undefined) add(q.event, 'event = ?');
  if (q.outcome !== undefined) {
    values.push(q.outcome);
    add(q.outcome, '(outcome = ? OR late_outcome = ?)');
  }
  if (q.since !== undefined) add(q.since, 'received_at >= ?');
  if (q.until !== undefined) add(q.until, 'received_at < ?');
  if (q.before !== undefined) add(q.before, 'id < ?');
  if (q.deadLetters === 'all') where.push('dead = 1');
  if (q.deadLetters === 'open') where.push('dead = 1 AND open_dead = 1');
  return { where, values };
}
