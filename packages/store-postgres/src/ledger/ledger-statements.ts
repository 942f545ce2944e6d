import type { LedgerQuery } from '@payhook/core';

const DROP_AT_ONCE = 10_000;

/**
 * The statements of the ledger in the quoted table `t`. In each, `$2` is the oldest `receivedAt`
 * kept and `$3` the oldest kept of an open dead letter (never later than `$2`).
 */
export function ledgerStatements(t: string) {
  const insert = `INSERT INTO ${t} (entry) SELECT e FROM jsonb_array_elements($1::jsonb) AS e ON CONFLICT (id) DO NOTHING RETURNING 1`;
  // Rows past a bound, oldest first, at most DROP_AT_ONCE: a backlog (a ledger idle past its
  // retention, a lowered bound) drains over several appends rather than timing each out. SKIP
  // LOCKED: processes trimming at once neither wait nor deadlock. `= ANY(ARRAY(…))` deletes through
  // the primary key, where `IN (…)` can get a plan that reads the whole table.
  const drop = (past: string, order: string) =>
    `DELETE FROM ${t} WHERE id = ANY(ARRAY(
      SELECT id FROM ${t} WHERE ${past} ORDER BY ${order} LIMIT ${DROP_AT_ONCE} FOR UPDATE SKIP LOCKED))`;
  // One round trip: insert the batch (a retried batch inserts nothing twice) and drop what is past
  // the bounds. The deletes see the table as it was before this batch: the count bounds lag one batch.
  // The accepted records and the refusals are counted apart: a flood of refusals never pushes out
  // an accepted record. `over` leaves the expired rows to `old`; its `+ 0` keeps the time index,
  // which would have it read every row the index holds, out of its plan: it walks the primary key.
  const append = (byCount: boolean, byRefusals: boolean) => {
    const maxEntries = '$4';
    const maxRefusals = byCount ? '$5' : '$4';
    return `
    WITH old AS (${drop('received_at < $2 AND (NOT open_dead OR received_at < $3)', 'received_at')}),
    ${
      byCount
        ? `cut AS (SELECT id FROM ${t} WHERE NOT refused ORDER BY id DESC OFFSET ${maxEntries} LIMIT 1),
    over AS (${drop('id <= (SELECT id FROM cut) AND NOT refused AND NOT open_dead AND received_at + 0 >= $2', 'id')}),`
        : ''
    }
    ${
      byRefusals
        ? `rcut AS (SELECT id FROM ${t} WHERE refused ORDER BY id DESC OFFSET ${maxRefusals} LIMIT 1),
    rover AS (${drop('refused AND id <= (SELECT id FROM rcut) AND received_at + 0 >= $2', 'id')}),`
        : ''
    }
    added AS (${insert})
    SELECT count(*)::int AS added FROM added`;
  };
  return {
    append,
    // `||` replaces top-level fields whole: a new deadLetter replaces the old one, retriedBy and all.
    update: `UPDATE ${t} SET entry = entry || $2::jsonb WHERE id = $1`,
    get: `SELECT entry::text AS entry FROM ${t} WHERE id = $3 AND (received_at >= $1 OR (open_dead AND received_at >= $2))`,
    remove: `DELETE FROM ${t} WHERE id = ANY($1::text[])`,
  };
}

/** The WHERE clause of a list: the records still kept, and every filter the query sets (the same as matchesQuery). */
export function filters(q: LedgerQuery, oldest: number, deadOldest: number, pack: (s: string) => string) {
  const where = ['(received_at >= $1 OR (open_dead AND received_at >= $2))'];
  const values: unknown[] = [oldest, deadOldest];
  const add = (value: unknown, sql: (p: string) => string) => {
    values.push(typeof value === 'string' ? pack(value) : value);
    where.push(sql(`$${values.length}`));
  };
  if (q.account !== undefined) add(q.account, (p) => `account = ${p}`);
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
