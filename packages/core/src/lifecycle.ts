/**
 * `@payhook/core/lifecycle`: the service's tables, each written once: a transaction's statuses and
 * the events that move it (section 3), the events' names and shape (section 6), and every answer a
 * receiver gives. For tools that model the service (the reference, `@payhook/testing`) and stores
 * that index outcomes.
 *
 * @module
 */
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
  type Mode,
  type TransactionStatus,
  type Transition,
} from './protocol/payment-lifecycle.js';
export { EVENT_NAMES, isPaymentEventName, paymentEventSchema, type PaymentEvent, type PaymentEventName } from './protocol/event-schema.js';
export { eventFromRecord } from './protocol/record-event.js';
export { COMMON_OUTCOMES, OUTCOMES, type DeadLetterReason, type DeliveryOutcome, type OutcomeFacts } from './protocol/outcomes.js';
export { SERVICE_TIMEOUT_MS } from './settings/options.js';
