import { storedOutcome } from '@payhook/core/store';
import type { ClaimResult, Outcome, StoreRecord } from '@payhook/core/store';
import type { Connection } from './driver.js';
import { claimStatements } from './schema.js';

interface Row {
  state: 'claimed' | 'released' | 'done';
  attempt: number;
  token: string | null;
  lease_until: number | null;
  outcome: Outcome | 'failed' | null;
  completed_at: number | null;
  expires_at: number;
}

/** What `claimsOver` takes: the table, the clock, and how a write transaction is run. */
export interface ClaimsOptions {
  /** The claims' table, made if absent. */
  table: string;
  /** Epoch ms. */
  now: () => number;
  /** Runs a claim's read and write as one: a write transaction on a file, as it is in a Durable Object. */
  transaction: <T>(fn: () => T) => T;
}

/** The five store operations, synchronous, with every time and bound given: the callers check and wrap them. */
export interface Claims {
  /** Claims `key` for `leaseMs`, or says who has it; the record is kept at least `retentionMs`. */
  claim(key: string, leaseMs: number, retentionMs: number): ClaimResult;
  /** Marks the claim done, kept `ttlMs`; true again for the token that already did, false if the token no longer holds it. */
  complete(key: string, token: string, outcome: Outcome, ttlMs: number): boolean;
  /** Gives the claim up, its record kept `retentionMs`; false if the token no longer holds it. */
  release(key: string, token: string, retentionMs: number): boolean;
  /** Pushes the lease's end to now + `leaseMs`; false if the token no longer holds it. */
  extend(key: string, token: string, leaseMs: number): boolean;
  /** The key's record, or undefined when there is none or it is past its retention. */
  get(key: string): StoreRecord | undefined;
  /** Deletes at most `limit` records past their retention; how many. */
  purge(limit: number): number;
}

/**
 * The store contract over SQL, on any connection that runs SQLite's dialect: a file through
 * `node:sqlite` or better-sqlite3 (`@payhook/store-sqlite`), or a Durable Object's own database
 * (`@payhook/store-durable-object`). Writes report what they changed with `RETURNING`, which every
 * one of them counts the same way.
 */
export function claimsOver(db: Connection, { table, now, transaction }: ClaimsOptions): Claims {
  const sql = claimStatements(db, table);
  const wrote = (rows: unknown[]) => rows.length === 1;
  return {
    claim(key, leaseMs, retentionMs) {
      const t = now();
      return transaction((): ClaimResult => {
        const row = sql.read.get(key) as Row | undefined;
        const live = row !== undefined && row.expires_at > t ? row : undefined;
        if (live?.state === 'done') return { status: 'done', outcome: storedOutcome(live.outcome), completedAt: live.completed_at! };
        if (live?.state === 'claimed' && live.lease_until! > t) return { status: 'in-progress', leaseExpiresAt: live.lease_until! };
        // A released or lapsed claim keeps its attempt count: the next run is a redelivery.
        const attempt = (live?.attempt ?? 0) + 1;
        const token = crypto.randomUUID();
        sql.claim.all(key, attempt, token, t + leaseMs, t + Math.max(retentionMs, leaseMs));
        return { status: 'claimed', token, attempt };
      });
    },
    complete(key, token, outcome, ttlMs) {
      const t = now();
      if (wrote(sql.complete.all(storedOutcome(outcome), t, t + ttlMs, key, token, t))) return true;
      // Idempotent for the token that completed it: a retried complete whose first answer was lost.
      return sql.completedBy.get(key, token, t) !== undefined;
    },
    release(key, token, retentionMs) {
      const t = now();
      return wrote(sql.release.all(t + retentionMs, key, token, t));
    },
    extend(key, token, leaseMs) {
      const t = now();
      // The record must outlive its lease, or a lapsed claim would forget its attempt count.
      return wrote(sql.extend.all(t + leaseMs, t + leaseMs, key, token, t));
    },
    get(key) {
      const t = now();
      const row = sql.read.get(key) as Row | undefined;
      if (!row || row.expires_at <= t) return undefined;
      if (row.state === 'done')
        return { state: 'done', attempt: row.attempt, outcome: storedOutcome(row.outcome), completedAt: row.completed_at! };
      if (row.state === 'claimed' && row.lease_until! > t)
        return { state: 'claimed', attempt: row.attempt, leaseExpiresAt: row.lease_until! };
      return { state: 'released', attempt: row.attempt };
    },
    purge(limit) {
      return sql.purge.all(now(), limit).length;
    },
  };
}
