/**
 * `@payhook/core/store`: what a store package (`@payhook/store-redis`, `@payhook/store-postgres`,
 * your own) builds on: the contract its tests hold it to (`@payhook/testing/store`), the ledger's
 * shapes and settings, and the clock. A merchant passes a store; only its author imports this.
 *
 * @module
 */
export type { ClaimInside } from './contracts/handling.js';
export { CLAIM_INSIDE } from './base/shared-keys.js';
export {
  DEFAULT_RETENTION_MS,
  SHORTEST_RETENTION_MS,
  type ClaimResult,
  type CompleteOptions,
  type Outcome,
  type Store,
  type StoreRecord,
} from './storage/store-contract.js';
export {
  DEFAULT_DEAD_LETTER_RETENTION_MS,
  DEFAULT_LEDGER_RETENTION_MS,
  failedDoneTtl,
  isKept,
  isOpenDeadLetter,
  isRefusal,
  ledgerSettings,
  matchesQuery,
  pageSize,
  type DeadLetter,
  type LateOutcome,
  type Ledger,
  type LedgerBodyMode,
  type LedgerEntry,
  type LedgerOptions,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerSource,
} from './storage/ledger.js';
export { accountLedger } from './ledger/account-ledger.js';
export { systemClock, type Clock } from './base/clock.js';
export { storeLog, type StoreLog } from './storage/store-log.js';
export { primaryWatch, SWITCH_MARGIN_MS, type PrimaryIdentity, type PrimaryWatch } from './storage/primary-watch.js';
export { grouped, positiveMs, storedOutcome, within } from './storage/store-kit.js';
export { keyWatches, type KeyWatches, type StoreWatch } from './storage/key-watches.js';
export type { Log } from './base/logger.js';
export { isNonRetriableError } from './base/errors.js';
