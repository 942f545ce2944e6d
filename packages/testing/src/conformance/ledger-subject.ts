import type { Ledger } from '@payhook/core/store';

// The ledger suite's subject, apart from the suite, so that its cases (ledger-bounds.ts) import it without a circle.

/** The ledger a conformance run tests. */
export interface LedgerUnderTest {
  /**
   * A ledger with the given bounds, on a namespace of its own (records of other runs must not
   * show). `close` is called after the suite.
   */
  make(bounds: LedgerBounds): Promise<{ ledger: Ledger; close?: () => Promise<void> }>;
}

/** The bounds a conformance case asks for: pass them on as the store's `ledger` option. */
export interface LedgerBounds {
  /** The ledger's `maxEntries`: most records kept. */
  maxEntries: number;
  /** The ledger's `retentionMs`: how long records are kept. */
  retentionMs: number;
  /** The ledger's `maxRefusals`, when the case bounds refusals. */
  maxRefusals?: number;
  /** The ledger's `deadLetterRetentionMs`, when the case bounds dead letters. */
  deadLetterRetentionMs?: number;
}
