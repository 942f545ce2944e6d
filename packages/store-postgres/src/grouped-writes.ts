import { grouped, storedOutcome } from '@payhook/core/store';
import type { ClaimResult } from '@payhook/core/store';
import type { QueryResult, QueryResultRow } from 'pg';
import type { columnOf, storeStatements } from './sql/store-statements.js';

/** Runs one statement on the store's pool (the table made first); rejects with the driver's own error. */
export type Run = <R extends QueryResultRow>(text: string, values: unknown[]) => Promise<QueryResult<R>>;

interface ClaimRow {
  key: string;
  status: string;
  attempt: number;
  outcome: string | null;
  at: number | null;
}

/** A deadlock Postgres broke by failing one statement: nothing of it was written, so it is sent once more. */
const DEADLOCK = '40P01';

/**
 * The claims and done records of deliveries that arrive together, each group one statement and so
 * one commit (one WAL flush) whatever its size, with each call's answer exactly what its own
 * statement would have given. Keys repeated within a group are sent once: the first call gets the
 * statement's answer; the others find the key as a concurrent claim would, in progress behind it.
 *
 * @example
 * const writes = groupedWrites(run, storeStatements(t), retentionMs);
 * const c = await writes.claim(key, randomUUID(), 30_000);
 */
export function groupedWrites(run: Run, SQL: ReturnType<typeof storeStatements>, retentionMs: number) {
  const once = async <R extends QueryResultRow>(text: string, values: unknown[]) => {
    try {
      return await run<R>(text, values);
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK) throw error;
      return run<R>(text, values);
    }
  };

  const claim = grouped(async (group: { key: string; token: string; lease: number }[]): Promise<ClaimResult[]> => {
    const first = new Map<string, number>();
    const sent: typeof group = [];
    for (const [i, c] of group.entries()) {
      if (first.has(c.key)) continue;
      first.set(c.key, i);
      sent.push(c);
    }
    // One alone takes the one-key statement, which Postgres plans in less time.
    const only = sent.length === 1 ? sent[0]! : undefined;
    const { rows } = only
      ? await once<ClaimRow>(SQL.claim, [only.key, only.token, only.lease, Math.max(retentionMs, only.lease)])
      : await once<ClaimRow>(SQL.claimMany, [sent.map((c) => c.key), sent.map((c) => c.token), sent.map((c) => c.lease), retentionMs]);
    const byKey = new Map(rows.map((row) => [row.key, row]));
    return group.map((c, i): ClaimResult => {
      const row = byKey.get(c.key);
      // A repeat within the group: the first call of its key holds it, or the key's state is theirs alike.
      if (first.get(c.key) !== i) {
        return row?.status === 'done' ? doneOf(row) : { status: 'in-progress', leaseExpiresAt: row?.at ?? Date.now() + c.lease };
      }
      if (row?.status === 'claimed') return { status: 'claimed', token: c.token, attempt: row.attempt };
      if (row?.status === 'done') return doneOf(row);
      // No row: another claim inserted the key after this statement's snapshot, so it is in progress.
      return { status: 'in-progress', leaseExpiresAt: row?.at ?? Date.now() + c.lease };
    });
  });

  const complete = grouped(
    async (group: { key: string; token: string; outcome: ReturnType<typeof columnOf>; ttl: number }[]): Promise<boolean[]> => {
      const only = group.length === 1 ? group[0]! : undefined;
      const { rows } = only
        ? await once<{ i: number }>(SQL.complete, [only.key, only.token, only.outcome, only.ttl])
        : await once<{ i: number }>(SQL.completeMany, [
            group.map((c) => c.key),
            group.map((c) => c.token),
            group.map((c) => c.outcome),
            group.map((c) => c.ttl),
          ]);
      const held = new Set(rows.map((row) => row.i - 1));
      return group.map((_, i) => held.has(i));
    },
  );

  return { claim, complete };
}

const doneOf = (row: ClaimRow): ClaimResult => ({ status: 'done', outcome: storedOutcome(row.outcome), completedAt: row.at ?? 0 });
