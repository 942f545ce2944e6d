export {
  createVerifier,
  sign,
  signAsync,
  verifySignature,
  verifySignatureAsync,
  type RawBody,
  type VerifyResult,
} from './protocol/signature.js';
export {
  EVENT_NAMES,
  isPaymentEventName,
  paymentEventSchema,
  type PaymentEvent,
  type PaymentEventName,
} from './protocol/event-schema.js';
export { createEventRouter, type EventRouter } from './routing/event-router.js';
export type { EventHandler, HandlerContext, HandlerOptions } from './contracts/handling.js';
export { createReceiver } from './running/receiver.js';
export type { HandleOptions, Receiver } from './contracts/receiving.js';
export type { JobInfo } from './contracts/delivery.js';
export type { Handoff, QueuedEvent } from './contracts/handling.js';
export {
  defaultDedupeKey,
  EPAY_SIGNATURE_HEADER,
  SERVICE_TIMEOUT_MS,
  SIGNATURE_HEADER,
  signatureHeaderName,
  type ReceiverOptions,
  type RunOptions,
} from './settings/options.js';
export type { DeliveryReport, ErrorHandler, ReceiverResult } from './contracts/delivery.js';
export { COMMON_OUTCOMES, OUTCOMES, type DeadLetterReason, type DeliveryOutcome, type OutcomeFacts } from './protocol/outcomes.js';
export type { LogFields, LogFunction, LoggerObject, LoggerOption, LogLevel } from './base/logger.js';
export type { HeaderDefect, SignatureHint, SignatureReason } from './contracts/delivery.js';
export type { Telemetry } from './contracts/handling.js';
export type { LoopBlockedReport } from './contracts/handling.js';
export type { RawDelivery } from './contracts/delivery.js';
export type { RecordClient } from './contracts/handling.js';
export { systemClock, type Clock } from './base/clock.js';
export { isNonRetriableError, NonRetriableError } from './base/errors.js';
export {
  createReconciler,
  type ReconcileClient,
  type Reconciler,
  type ReconcilerOptions,
  type ReconcileRun,
} from './reconcile/reconciler.js';
export { eventFromRecord } from './protocol/record-event.js';
export { escapeText } from './base/escape-text.js';
export { memoryStore, type MemoryStoreOptions } from './storage/memory-store.js';
export { retryDeadLetters, type DeadLetterRetry } from './ledger/dead-letters.js';
export type { ReplayOptions } from './contracts/receiving.js';
export { eraseDeliveries, type EraseQuery } from './ledger/erase.js';
export {
  DEFAULT_LEDGER_RETENTION_MS,
  DEFAULT_DEAD_LETTER_RETENTION_MS,
  ledgerSettings,
  failedDoneTtl,
  matchesQuery,
  isKept,
  isOpenDeadLetter,
  isRefusal,
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
export {
  DEFAULT_RETENTION_MS,
  type ClaimResult,
  type CompleteOptions,
  type Outcome,
  type Store,
  type StoreRecord,
} from './storage/store.js';
export {
  AGREEING_STATUSES,
  EVENTS_BY_STATUS,
  isAction,
  STATUS_AFTER,
  STATUS_RANK,
  TRANSACTION_STATUSES,
  TRANSITIONS,
  wasPaid,
  type Action,
  type TransactionStatus,
  type Transition,
} from './protocol/lifecycle.js';
// The REST contract lives in `@payhook/core/api`; handlers only see the record's type.
export type { TransactionRecord } from './protocol/api-schema.js';
