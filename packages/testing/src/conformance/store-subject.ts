import type { Store } from '@payhook/core';

// The store suite's subject, apart from the suite, so that its cases (store-races.ts) import it without a circle.

/** The store a conformance run tests: how to make it, and how its clock moves. */
export interface StoreUnderTest {
  /** A store on the backend; called more than once when `shared` is true, each call a new client. */
  make(): Promise<Store> | Store;
  /** True when stores made by separate `make()` calls see the same keys (Redis, Postgres). */
  shared: boolean;
  /**
   * Move the clock the stores read by `ms`, for a store built on a virtual clock (e.g.
   * `memoryStore({ now })`): the lease expiry and retention tests then move it and never sleep.
   * Leave it out for a store that keeps time on its server (Redis, Postgres): the suite then
   * waits for real, a few hundred milliseconds per such test.
   */
  advance?: (ms: number) => Promise<void> | void;
}

/** What the conformance suite shares with its cases in other files. */
export interface StoreCases {
  subject: StoreUnderTest;
  /** The suite's first store, made before any case runs. */
  store(): Store;
  /** Another store on the backend (another client of a shared one), closed after the suite. */
  open(): Promise<Store>;
  /** A key no other case or run uses. */
  key(): string;
  /** Returns once `witness`, claimed with a lease of `leaseMs`, can be claimed again on the store's own clock. */
  lapse(witness: string, leaseMs: number): Promise<void>;
}
