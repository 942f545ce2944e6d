export { createEvent, createEvents, newReference, type EventOverrides } from './create-event.js';
export {
  signedBody,
  signedRequest,
  type EventOrBytes,
  type SignedBody,
  type SignedRequestOptions,
  type SignOptions,
} from './signed-request.js';
export {
  connect,
  type Connection,
  type DeliveryTarget,
  type FetchApp,
  type FetchHandler,
  type HandleApp,
  type InjectApp,
  type NodeListener,
  type RouteModule,
  type TargetOptions,
} from './target.js';
export { deliver, seededRandom, type DeliverOptions, type DeliverResult, type DeliveryAttemptReport, type DeliveryRun } from './deliver.js';
export { recordRuns, type HandlerRun, type HandlerRuns } from './handler-runs.js';
export {
  startReferenceService,
  type MoveOptions,
  type StartReferenceServiceOptions,
  type TestReferenceService,
} from './reference-service.js';
export { payhookMatchers, type MatcherContext, type MatcherResult, type PayhookMatchers, type ProcessedOptions } from './matchers.js';
export { manualClock, type ManualClock, type ManualTimer } from './manual-clock.js';
