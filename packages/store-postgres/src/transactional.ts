import type { EventHandler, HandlerContext, PaymentEvent, PaymentEventName } from '@payhook/core';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { inTransaction } from './in-transaction.js';
import { NAME, storeError } from './store-error.js';

/** A merchant's database effect, run on `client` inside the transaction that marks the event done. */
export type TransactionalEffect<E extends PaymentEventName = PaymentEventName> = (
  event: PaymentEvent<E>,
  context: HandlerContext,
  client: PoolClient,
) => unknown;

/** What `store.transactional()` takes from its store. */
export interface TransactionalStore {
  pool: Pool;
  /** The table as given, for error messages. */
  table: string;
  /** Creates the table before first use (and starts the purge), as every use of the store does. */
  ensureTable: () => Promise<void> | undefined;
  /** The statement that marks the record done only while `$2` holds the claim on `$1` (retention `$3`). */
  completeHeld: string;
  /** The store's query config for a statement (named when it prepares). */
  statement: (text: string, values?: unknown[]) => QueryConfig;
  /** Told the claim token of each transaction that committed its done record. */
  committed: (token: string) => void;
  retentionMs: number;
  /** Longest the whole transaction may run (`transactionTimeoutMs`). */
  limitMs: number;
  /** Longest one statement may run (`queryTimeoutMs`). */
  statementMs: number;
}

/**
 * The handler `store.transactional(effect)` returns: one transaction that first marks the event
 * done, fenced on the delivery's claim token, then runs the effect, so both commit or neither and
 * an effect never runs for a delivery that lost its claim.
 *
 * @example
 * const handler = transactionalHandler({ pool, table, ensureTable, completeHeld, statement, committed, retentionMs, limitMs, statementMs }, effect);
 */
export function transactionalHandler<E extends PaymentEventName>(
  store: TransactionalStore,
  effect: TransactionalEffect<E>,
): EventHandler<E> {
  const { pool, table, ensureTable, completeHeld, statement, committed, retentionMs, limitMs, statementMs } = store;
  return async (event, ctx) => {
    const key = ctx.dedupeKey;
    try {
      await ensureTable();
    } catch (cause) {
      throw storeError('open a transaction for', key, cause, table);
    }
    let began = false;
    try {
      await inTransaction(pool, { limitMs, statementMs }, async (client) => {
        began = true;
        // Fence first: the effect runs only while this delivery holds the claim, and the row lock
        // keeps any takeover waiting until the transaction ends.
        const marked = await client.query(statement(completeHeld, [key, ctx.claimToken, retentionMs]));
        if (marked.rowCount !== 1) {
          throw new Error(
            `${NAME} the claim on "${key}" is no longer held by this delivery (its lease lapsed and another delivery took it over, or it is done), so the effect did not run. Raise leaseMs above your slowest handler.`,
          );
        }
        await effect(event, ctx, client);
      });
      committed(ctx.claimToken);
    } catch (error) {
      // No connection to be had: the database is down, the same as a failed claim.
      if (!began) throw storeError('open a transaction for', key, error, table);
      throw error;
    }
  };
}

/** Most tokens kept: a run whose complete never comes (a later handler threw) drops out past it. */
const MOST_TOKENS = 4_096;

/**
 * The claim tokens of transactions that committed their done record, until the receiver's complete
 * for each comes: that complete then answers true, as its statement would (the record is done with
 * that token), one round trip sooner. Oldest first out past 4,096.
 *
 * @example
 * const committed = recentTokens();
 * committed.add(token); committed.take(token); // true, once
 */
export function recentTokens() {
  const tokens = new Set<string>();
  return {
    add(token: string) {
      tokens.add(token);
      if (tokens.size > MOST_TOKENS) tokens.delete(tokens.values().next().value!);
    },
    take: (token: string): boolean => tokens.delete(token),
  };
}
