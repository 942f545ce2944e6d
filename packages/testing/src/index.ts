/**
 * `@payhook/testing`: helpers for testing webhook handlers: signed events, deliveries with the
 * service's retries on a virtual clock, the reference service, and vitest and jest matchers.
 *
 * @module
 */
export { createEvent, createEvents, newReference, type EventOverrides } from './events/create-event.js';
export {
  signedBody,
  signedRequest,
  type EventOrBytes,
  type SignedBody,
  type SignedRequestOptions,
  type SignOptions,
} from './events/signed-request.js';
export { connect, type Connection } from './targets/connect.js';
export type {
  DeliveryTarget,
  FetchApp,
  FetchHandler,
  HandleApp,
  InjectApp,
  NodeListener,
  RouteModule,
  TargetOptions,
} from './targets/target.js';
export {
  deliver,
  seededRandom,
  type DeliverOptions,
  type DeliverResult,
  type DeliveryAttemptReport,
  type DeliveryRun,
} from './delivering/deliver.js';
export { recordRuns, type HandlerRun, type HandlerRuns } from './matchers/handler-runs.js';
export {
  startReferenceService,
  type MoveOptions,
  type StartReferenceServiceOptions,
  type TestMerchant,
  type TestReferenceService,
} from './reference/reference-service.js';
export {
  payhookMatchers,
  type MatcherContext,
  type MatcherResult,
  type PayhookMatchers,
  type ProcessedOptions,
} from './matchers/matchers.js';
export { manualClock, type ManualClock, type ManualTimer } from './manual-clock.js';
