export { createReferenceService, type ReferenceService, type ReferenceServiceOptions } from './service.js';
export { listen, type ListenOptions, type RunningServer } from './server.js';
export { createClock, type Clock, type ClockMode, type ClockOptions } from './clock.js';
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
} from './merchants.js';
export { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './retry-schedule.js';
export type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryState } from './delivery-record.js';
export { attemptError, type AttemptOutcome } from './attempt-error.js';
export { faultInputSchema, type FaultInput, type FaultRule } from './faults.js';
export { SANDBOX_PHONES } from './scenarios.js';
export { TRANSITIONS, type Action } from './transitions.js';
export { PAYMENT_METHODS } from './transactions.js';
