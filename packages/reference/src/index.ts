/**
 * `@payhook/reference`: the reference implementation of the payment service, for development and
 * tests: its API, its webhooks and their retries, and sandbox faults.
 *
 * @module
 */
export { createReferenceService } from './service/create-service.js';
export type { ReferenceService, ReferenceServiceOptions } from './contract/service-types.js';
export { listen, type ListenOptions, type RunningServer } from './http/server.js';
export { createClock, type ServiceClock, type ClockMode, type ClockOptions } from './domain/clock.js';
export {
  generateApiKey,
  generateWebhookSecret,
  hashKey,
  PERMISSIONS,
  type ApiKeyConfig,
  type MerchantConfig,
  type MerchantRegistry,
  type Mode,
  type Permission,
} from './domain/merchants.js';
export { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './delivery/retry-schedule.js';
export type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryState } from './delivery/delivery-record.js';
export { attemptError, type AttemptOutcome } from './delivery/attempt-error.js';
export { faultInputSchema, type FaultInput, type FaultRule } from './delivery/faults.js';
export { SANDBOX_PHONES } from './domain/scenarios.js';
export { TRANSITIONS, type Action } from './domain/transitions.js';
export { PAYMENT_METHODS } from './domain/providers.js';
