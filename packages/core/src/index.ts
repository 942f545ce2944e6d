export { createVerifier, sign, signAsync, verifySignature, verifySignatureAsync, type RawBody, type VerifyResult } from './signature.js';
export {
  EVENT_NAMES,
  isPaymentEventName,
  paymentEventSchema,
  type PaymentEvent,
  type PaymentEventName,
} from './event-schema.js';
export {
  createEventRouter,
  type EventHandler,
  type EventRouter,
  type HandlerContext,
  type HandlerOptions,
} from './event-router.js';
export { createReceiver, type HandleOptions, type Receiver } from './receiver.js';
export type { Handoff, JobInfo, QueuedEvent } from './handoff.js';
export {
  defaultDedupeKey,
  EPAY_SIGNATURE_HEADER,
  SERVICE_TIMEOUT_MS,
  SIGNATURE_HEADER,
  signatureHeaderName,
  type ReceiverOptions,
  type RunOptions,
} from './options.js';
export type { DeliveryReport, ErrorHandler, ReceiverResult } from './pipeline/outcome.js';
export { COMMON_OUTCOMES, OUTCOMES, type DeadLetterReason, type DeliveryOutcome, type OutcomeFacts } from './outcomes.js';
export type { LogFields, LogFunction, LoggerObject, LoggerOption, LogLevel } from './logger.js';
export type { HeaderDefect, SignatureHint, SignatureReason } from './pipeline/diagnose.js';
export type { Telemetry } from './telemetry.js';
export type { LoopBlockedReport } from './pipeline/loop-watch.js';
export type { RawDelivery } from './pipeline/intake.js';
export type { RecordClient } from './pipeline/record-check.js';
export { systemClock, type Clock } from './clock.js';
export { isNonRetriableError, NonRetriableError } from './errors.js';
export {
  createReconciler,
  type ReconcileClient,
  type Reconciler,
  type ReconcilerOptions,
  type ReconcileRun,
} from './reconciler.js';
export { eventFromRecord } from './record-event.js';
export { escapeText } from './escape-text.js';
export { memoryStore, type MemoryStoreOptions } from './memory-store.js';
export { retryDeadLetters, type DeadLetterRetry } from './dead-letters.js';
export type { ReplayOptions } from './replay.js';
export { eraseDeliveries, type EraseQuery } from './erase.js';
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
} from './ledger.js';
export {
  DEFAULT_RETENTION_MS,
  type ClaimResult,
  type CompleteOptions,
  type Outcome,
  type Store,
  type StoreRecord,
} from './store.js';
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
} from './lifecycle.js';
// The REST contract lives in `@payhook/core/api`; handlers only see the record's type.
export type { TransactionRecord } from './api-schema.js';
