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
export {
  createReceiver,
  defaultDedupeKey,
  SERVICE_TIMEOUT_MS,
  SIGNATURE_HEADER,
  type DeliveryOutcome,
  type DeliveryReport,
  type ErrorHandler,
  type Logger,
  type RawDelivery,
  type Receiver,
  type RecordClient,
  type ReceiverOptions,
  type ReceiverResult,
} from './receiver.js';
export { NonRetriableError } from './errors.js';
export { readBodyLimited } from './read-body.js';
export {
  createReconciler,
  EVENTS_BY_STATUS,
  type ReconcileClient,
  type Reconciler,
  type ReconcilerOptions,
  type ReconcileRun,
} from './reconciler.js';
export { memoryStore, type MemoryStoreOptions } from './memory-store.js';
export {
  DEFAULT_RETENTION_MS,
  type ClaimResult,
  type CompleteOptions,
  type Outcome,
  type Store,
  type StoreRecord,
} from './store.js';
export * from './api-schema.js';
