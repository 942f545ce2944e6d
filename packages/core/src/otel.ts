/**
 * `@payhook/core/otel`: spans and metrics for every delivery through `@opentelemetry/api`, an
 * optional peer that only this entry loads. The implementation is observing/open-telemetry.ts.
 *
 * @module
 */
export { openTelemetry, type OpenTelemetryOptions } from './observing/open-telemetry.js';
export type { Telemetry } from './contracts/handling.js';
