import { randomUUID } from 'node:crypto';
import type { EventHandler, HandlerContext, PaymentEvent, PaymentEventName } from '@payhook/core';
import { CLAIM_INSIDE, type ClaimInside, type ClaimResult } from '@payhook/core/store';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { inTransaction } from './base/in-transaction.js';
import { NAME, storeError } from './base/store-error.js';

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
  /** The statement that claims `$1` as done for the token `$2` (retention `$3`), where it is free. */
  claimDone: string;
  /** The store's ordinary claim: who has a key that was not free. */
  claim: (key: string, leaseMs: number) => Promise<ClaimResult>;
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
 * an effect never runs for a delivery that lost its claim. With `{ claim: 'inside' }` it also
 * carries core's `CLAIM_INSIDE`, which takes the claim in that same transaction (claimingInside).
 *
 * @example
 * // `parts`: the store's pool, statements and limits (TransactionalStore), as postgres-store.ts passes them.
 * const handler = transactionalHandler(parts, effect, { claim: 'inside' });
 */
export function transactionalHandler<E extends PaymentEventName>(
  store: TransactionalStore,
  effect: TransactionalEffect<E>,
  options: TransactionalOptions = {},
): EventHandler<E> {
  const { completeHeld, statement, committed, retentionMs } = store;
  const handler = async (event: PaymentEvent<E>, ctx: HandlerContext) => {
    const key = ctx.dedupeKey;
    let began = false;
    await storeTransaction(
      store,
      key,
      'open a transaction for',
      () => began,
      async (client) => {
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
      },
    );
    committed(ctx.claimToken);
  };
  if (options.claim !== 'inside') return handler;
  return Object.assign(handler, { [CLAIM_INSIDE]: claimingInside(store, effect as TransactionalEffect) });
}

/** How `store.transactional()` takes its claim. */
export interface TransactionalOptions {
  /**
   * `'inside'`: where this is the event's only handler, the claim is taken in the effect's own
   * transaction, so the claim, the effect and the done record are one commit rather than two. A
   * copy that arrives meanwhile then waits on the row, holding a connection of its pool, until the
   * transaction ends, instead of being answered `in-progress` or told later: keep such effects short.
   * Default: the claim is its own commit, before the transaction.
   */
  claim?: 'inside' | 'before';
}

/**
 * The claim, the effect and the done record in one transaction (see `ClaimInside` in core): the
 * first statement claims the key as done; a key that was not free leaves the transaction empty and
 * gets the store's ordinary claim's answer.
 */
function claimingInside(store: TransactionalStore, effect: TransactionalEffect): ClaimInside {
  const { claimDone, claim, statement, retentionMs } = store;
  return async (event, context, leaseMs, claimed) => {
    const key = context.dedupeKey;
    const token = randomUUID();
    let taken = false;
    await storeTransaction(
      store,
      key,
      'claim',
      () => taken,
      async (client) => {
        const { rows } = await client.query<{ attempt: number }>(statement(claimDone, [key, token, retentionMs]));
        if (rows.length === 0) return;
        const attempt = rows[0]!.attempt;
        taken = true;
        claimed(token, attempt);
        await effect(event, { ...context, claimToken: token, attempt, redelivery: attempt > 1 }, client);
      },
    );
    return taken ? { status: 'ran' } : claim(key, leaseMs);
  };
}

/**
 * `work` in a transaction on the store's pool, its table made first. A failure before the effect's
 * part began (`began()` false: no connection, no table, the claim's own statement) is the store's,
 * and says what could not be done (`what`); the effect's own errors pass as they are.
 */
async function storeTransaction(
  store: TransactionalStore,
  key: string,
  what: string,
  began: () => boolean,
  work: (client: PoolClient) => Promise<void>,
): Promise<void> {
  const { pool, table, ensureTable, limitMs, statementMs } = store;
  try {
    await ensureTable();
  } catch (cause) {
    throw storeError('open a transaction for', key, cause, table);
  }
  try {
    await inTransaction(pool, { limitMs, statementMs }, work);
  } catch (error) {
    // No connection to be had: the database is down, the same as a failed claim.
    if (!began()) throw storeError(what, key, error, table);
    throw error;
  }
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
