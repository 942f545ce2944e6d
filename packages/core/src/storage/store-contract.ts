import type { Log } from '../base/logger.js';
import { STORE_SYNC } from '../base/shared-keys.js';
import type { StoreWatch } from './key-watches.js';
import type { Ledger } from './ledger.js';

/**
 * The store contract: how the receiver claims a delivery so that each event runs once,
 * even when duplicates land at the same time on several processes.
 *
 * A key moves through three states: absent (or released) → claimed (a lease with a token)
 * → done. Only the holder of the token may complete, release or extend a claim; a lease
 * that expires may be taken over by the next claim, and from then on the old token is
 * fenced off: its late `complete` changes nothing.
 *
 * @example
 * const r = await store.claim('sandbox:ref_1:payment.success', 30_000);
 * if (r.status === 'claimed') {
 *   await runHandler();
 *   await store.complete(key, r.token, { outcome: 'ok' });
 * }
 */
export interface Store {
  /** Atomically claim `key` for `leaseMs`, or say who has it. */
  claim(key: string, leaseMs: number): Promise<ClaimResult>;
  /**
   * Mark the claim done for `ttlMs` (the store's retention when omitted). True again for the token
   * that already completed it; false if the token no longer holds the claim.
   */
  complete(key: string, token: string, options?: CompleteOptions): Promise<boolean>;
  /** Give the claim up so that the next delivery runs the handler again. False if the token no longer holds it. */
  release(key: string, token: string): Promise<boolean>;
  /** Push the lease's end to now + `leaseMs`. False if the token no longer holds the claim. */
  extend(key: string, token: string, leaseMs: number): Promise<boolean>;
  /** Read a key's record without changing it, for tests, dashboards and the reconciler. */
  get(key: string): Promise<StoreRecord | undefined>;
  /**
   * Watch a key another delivery is running: the promise resolves once the store is listening,
   * and the watch tells when the key is completed or released, by any process sharing the store.
   * A copy that waits for the running delivery (`onInProgress: 'wait'`) then claims again only when
   * told, not on a timer. A store without it is asked again after growing pauses.
   */
  watch?(key: string): Promise<StoreWatch>;
  /** Free connections or timers, if the store holds any. */
  close?(): Promise<void>;
  /** The delivery ledger, when the store was created with a `ledger` option: the receiver records every delivery in it. */
  readonly ledger?: Ledger;
  /**
   * How long the store keeps a done record by default. The ordering guard reads it: an earlier
   * event that happened longer ago than this may have run and been forgotten, so it never waits
   * for it or runs it again. A store that does not say counts as keeping them 24 hours.
   */
  readonly retentionMs?: number;
  /**
   * Called by every receiver and queue worker built on the store with its logger (`logger`
   * option): the store's own warnings and errors go there from then on instead of the console.
   * A store made with `storeLog()` from `@payhook/core/store` passes its `use`.
   */
  useLogger?(log: Log): void;
}

/**
 * A done record's outcome. `ok`: the handlers ran to the end. `rejected`: a handler threw
 * `NonRetriableError` (the receiver's outcome of the same name); it is not run again. Records
 * written by earlier versions name it `failed`: a store reads those as `rejected` (they live as
 * long as the store's retention, 30 days by default).
 */
export type Outcome = 'ok' | 'rejected';

/** How `complete` marks a claim done. */
export interface CompleteOptions {
  /** How long the done record is kept. Defaults to the store's retention. */
  ttlMs?: number;
  /** How the handlers ended: `ok` (the default) or `rejected`. */
  outcome?: Outcome;
}

/**
 * What `claim` answers: `claimed`, with the token that completes, releases or extends it;
 * `in-progress`, another holds it until `leaseExpiresAt` (epoch ms); or `done`, with how the
 * handlers ended and when (`completedAt`, epoch ms).
 */
export type ClaimResult =
  /** `attempt` counts claims of this key: 1 the first time, more after a release or an expired lease. */
  | { status: 'claimed'; token: string; attempt: number }
  | { status: 'in-progress'; leaseExpiresAt: number }
  | { status: 'done'; outcome: Outcome; completedAt: number };

/**
 * A key's record as `get` reads it: `claimed` (its lease ends at `leaseExpiresAt`, epoch ms),
 * `released`, or `done`; `attempt` counts its claims.
 */
export type StoreRecord =
  | { state: 'claimed'; attempt: number; leaseExpiresAt: number }
  | { state: 'released'; attempt: number }
  | { state: 'done'; attempt: number; outcome: Outcome; completedAt: number };

/** Thirty days: the signature carries no timestamp, so an old delivery can be replayed long after its retries end. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** The memory store's retention, the shortest of payhook's stores: a store that does not say its own counts as this. */
export const SHORTEST_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * What the receiver calls on a store. A store may also carry a synchronous view of its operations
 * under STORE_SYNC (the memory store does): the receiver then runs a delivery without awaiting it.
 */
export interface StoreOps {
  claim(key: string, leaseMs: number): ClaimResult | Promise<ClaimResult>;
  complete(key: string, token: string, options?: CompleteOptions): boolean | Promise<boolean>;
  release(key: string, token: string): boolean | Promise<boolean>;
  extend(key: string, token: string, leaseMs: number): boolean | Promise<boolean>;
}

/** The synchronous view of `store` if it has one, else the store itself. */
export const storeOps = (store: Store): StoreOps => (store as { [STORE_SYNC]?: StoreOps })[STORE_SYNC] ?? store;
