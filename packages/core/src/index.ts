/**
 * `@payhook/core`: what a merchant writes against. Store authors import `@payhook/core/store`,
 * tools that read the service's tables `@payhook/core/lifecycle`, framework adapters
 * `@payhook/core/adapter`, the REST contract `@payhook/core/api` (CONTRIBUTING.md, "The doors").
 *
 * @module
 */
export { createReceiver } from './running/receiver.js';
export { createEventRouter, type EventRouter } from './routing/event-router.js';
export { memoryStore, type MemoryStoreOptions } from './storage/memory-store.js';
export { NonRetriableError } from './base/errors.js';
export type { AccountSettings, AccountSource, AccountsOptions } from './settings/accounts-options.js';
export { defaultDedupeKey, type ReceiverOptions, type RunOptions } from './settings/options.js';
// The signature functions and header names, also alone at `@payhook/core/verify`.
export * from './verify.js';
export {
  createReconciler,
  type ReconcileClient,
  type Reconciler,
  type ReconcilerOptions,
  type ReconcileRun,
} from './reconcile/reconciler.js';
export { retryDeadLetters, type DeadLetterRetry } from './ledger/dead-letters.js';
export { eraseDeliveries, type EraseQuery } from './ledger/erase.js';

export type { PaymentEvent, PaymentEventName } from './protocol/event-schema.js';
export type { Mode, TransactionStatus } from './protocol/payment-lifecycle.js';
export type { TransactionRecord } from './protocol/api-schema.js';
export type { DeliveryOutcome } from './protocol/outcomes.js';
export type { HandleOptions, Receiver, ReplayOptions } from './contracts/receiving.js';
export type {
  EventHandler,
  Handoff,
  HandlerContext,
  HandlerOptions,
  LoopBlockedReport,
  QueuedEvent,
  RecordClient,
  Telemetry,
} from './contracts/handling.js';
export type {
  DeliveryReport,
  DeliverySource,
  ErrorHandler,
  HeaderDefect,
  JobInfo,
  RawDelivery,
  ReceiverResult,
  SignatureHint,
  SignatureReason,
} from './contracts/delivery.js';
export type { LoggerObject, LogLevel } from './base/logger.js';
export type { LogFields, LogFunction, LoggerOption } from './contracts/log-fields.js';
export type { Clock } from './base/clock.js';
export type { Store } from './storage/store-contract.js';
export type { DeadLetter, LedgerEntry, LedgerQuery } from './storage/ledger.js';
