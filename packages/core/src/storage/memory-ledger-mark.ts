import type { Ledger } from './ledger.js';

/** On every memory ledger, not enumerable, and the same symbol in every copy of core: how the `payhook` command tells one. */
const MEMORY_LEDGER = Symbol.for('payhook.memoryLedger');

/** Marks a memory store's ledger (the real one, and the store's stand-in while it loads). */
export const markMemoryLedger = (ledger: Ledger): void => {
  Object.defineProperty(ledger, MEMORY_LEDGER, { value: true });
};

/** Whether `ledger` is a memory store's, which only the process that made it can read. */
export const isMemoryLedger = (ledger: Ledger): boolean => (ledger as { [MEMORY_LEDGER]?: unknown })[MEMORY_LEDGER] === true;
