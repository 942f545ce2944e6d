import { MEMORY_LEDGER } from '../base/shared-keys.js';
import type { Ledger } from './ledger.js';

/** Marks a memory store's ledger (the real one, and the store's stand-in while it loads). */
export const markMemoryLedger = (ledger: Ledger): void => {
  Object.defineProperty(ledger, MEMORY_LEDGER, { value: true });
};

/** Whether `ledger` is a memory store's, which only the process that made it can read. */
export const isMemoryLedger = (ledger: Ledger): boolean => (ledger as { [MEMORY_LEDGER]?: unknown })[MEMORY_LEDGER] === true;
