import type { DeliveryReport } from './pipeline/outcome.js';

/**
 * What watches deliveries besides the logger: `openTelemetry()` from `@payhook/core/otel`, or your
 * own. Called once per report, after it is logged, with the receiver's clock at that moment: a
 * report's `durationMs` before `now` is when its delivery arrived. A late outcome (`late: true`)
 * follows its delivery's 202 or 503 report, with the same `dedupeKey`. Errors it throws are ignored.
 */
export interface Telemetry {
  record(report: DeliveryReport, now: number): void;
}
