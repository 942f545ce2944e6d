import { metrics, SpanKind, SpanStatusCode, trace, type Attributes, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import type { DeliveryOutcome, DeliveryReport } from './pipeline/outcome.js';
import { levelOf } from './pipeline/report.js';
import type { Telemetry } from './telemetry.js';

export type { Telemetry } from './telemetry.js';

export interface OpenTelemetryOptions {
  /** Default: `trace.getTracer('@payhook/core')`, from the globally registered provider (a no-op until an SDK is). */
  tracer?: Tracer;
  /** Default: `metrics.getMeter('@payhook/core')`, likewise. */
  meter?: Meter;
}

const SCOPE = '@payhook/core';
/** Outcomes after which handlers have run (or, answered early, go on running). */
const HANDLERS_RAN: ReadonlySet<DeliveryOutcome> = new Set(['processed', 'failed', 'rejected']);
/** Answers that leave the handler running: their span stays open until its late outcome. */
const ANSWERED_EARLY: ReadonlySet<DeliveryOutcome> = new Set(['accepted', 'deferred']);
const DEDUPE_RESULT: Partial<Record<DeliveryOutcome, string>> = { duplicate: 'done', 'in-progress': 'running' };
/** At most this many spans wait for a late outcome; past it the oldest is ended as it is. */
const MAX_OPEN = 10_000;

/**
 * Spans and metrics for every delivery, through `@opentelemetry/api` (an optional peer: install
 * it to use this entry). One span per delivery, `payhook.delivery`, a child of the active span
 * (the framework's HTTP span, where it is instrumented), from the body's arrival to the answer, with an event
 * at the answer; a delivery answered 202 or 503 with its handler still running keeps its span open
 * until that handler's outcome, which is recorded on it. Metrics: `payhook.deliveries` by outcome,
 * `payhook.answer.duration`, `payhook.handler.duration`, `payhook.late_outcomes`,
 * `payhook.duplicates` and `payhook.reconcile.recovered`.
 *
 * @example
 * import { openTelemetry } from '@payhook/core/otel';
 * const receiver = createReceiver({ secret, telemetry: openTelemetry() });
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Telemetry {
  const tracer = options.tracer ?? trace.getTracer(SCOPE);
  const meter = options.meter ?? metrics.getMeter(SCOPE);
  const deliveries = meter.createCounter('payhook.deliveries', { unit: '{delivery}', description: 'Deliveries answered, by outcome' });
  const answerTime = meter.createHistogram('payhook.answer.duration', {
    unit: 's',
    description: 'From a delivery reaching the receiver to its answer',
  });
  const handlerTime = meter.createHistogram('payhook.handler.duration', {
    unit: 's',
    description: "From a delivery reaching the receiver to its handlers' end, for deliveries whose handlers ran",
  });
  const lateOutcomes = meter.createCounter('payhook.late_outcomes', {
    unit: '{delivery}',
    description: 'Outcomes of handlers that finished after their delivery was answered (202 or 503)',
  });
  const duplicates = meter.createCounter('payhook.duplicates', {
    unit: '{delivery}',
    description: 'Copies of events already done, or running elsewhere',
  });
  const recovered = meter.createCounter('payhook.reconcile.recovered', { unit: '{event}', description: 'Events a reconcile ran that no delivery had' });
  const open = new Map<string, Span>();

  const finish = (span: Span, r: DeliveryReport, now: number) => {
    if (levelOf(r) === 'error') {
      span.setStatus({ code: SpanStatusCode.ERROR, message: r.outcome });
      if (r.error instanceof Error) span.recordException(r.error, now);
    }
    span.end(now);
  };

  return {
    record(r, now) {
      const seconds = (r.durationMs ?? 0) / 1000;
      const outcome = { 'payhook.outcome': r.outcome };
      if (r.late) {
        lateOutcomes.add(1, outcome);
        if (HANDLERS_RAN.has(r.outcome)) handlerTime.record(seconds, outcome);
        const span = r.dedupeKey === undefined ? undefined : open.get(r.dedupeKey);
        if (span === undefined) return;
        open.delete(r.dedupeKey!);
        span.setAttributes({ 'payhook.late': true, 'payhook.late_outcome': r.outcome, ...errorType(r) });
        span.addEvent('payhook.late_outcome', outcome, now);
        return finish(span, r, now);
      }
      deliveries.add(1, { ...outcome, 'http.response.status_code': r.status, 'payhook.source': r.source ?? 'webhook' });
      answerTime.record(seconds, outcome);
      const dedupe = DEDUPE_RESULT[r.outcome];
      if (dedupe !== undefined) duplicates.add(1, { 'payhook.dedupe.result': dedupe });
      if (HANDLERS_RAN.has(r.outcome)) handlerTime.record(seconds, outcome);
      if (r.source === 'reconcile' && (r.outcome === 'processed' || r.outcome === 'rejected')) recovered.add(1, outcome);

      const span = tracer.startSpan('payhook.delivery', { kind: SpanKind.INTERNAL, startTime: now - (r.durationMs ?? 0), attributes: attributesOf(r) });
      span.addEvent('payhook.answered', { 'http.response.status_code': r.status }, now);
      if (ANSWERED_EARLY.has(r.outcome) && r.dedupeKey !== undefined) {
        if (open.size >= MAX_OPEN) {
          const [key, oldest] = open.entries().next().value as [string, Span];
          open.delete(key);
          oldest.end(now);
        }
        open.set(r.dedupeKey, span);
        return;
      }
      finish(span, r, now);
    },
  };
}

/** A report as span attributes: OpenTelemetry's names where its conventions have one, `payhook.*` otherwise. */
function attributesOf(r: DeliveryReport): Attributes {
  const a: Attributes = {
    'http.response.status_code': r.status,
    'payhook.outcome': r.outcome,
    'payhook.source': r.source ?? 'webhook',
    'payhook.late': false,
  };
  if (r.event !== undefined) a['payhook.event'] = r.event;
  if (r.reference !== undefined) a['payhook.reference'] = r.reference;
  if (r.dedupeKey !== undefined) a['payhook.dedupe.key'] = r.dedupeKey;
  a['payhook.dedupe.result'] = DEDUPE_RESULT[r.outcome] ?? (r.attempt !== undefined ? 'claimed' : 'none');
  if (r.attempt !== undefined) a['payhook.attempt'] = r.attempt;
  if (r.secretIndex !== undefined) a['payhook.secret.index'] = r.secretIndex;
  if (r.reason !== undefined) a['payhook.signature.reason'] = r.reason;
  return { ...a, ...errorType(r) };
}

/** `error.type`, as the conventions name it: the error's class, or the outcome when there is none. */
function errorType(r: DeliveryReport): Attributes {
  if (levelOf(r) !== 'error') return {};
  return { 'error.type': r.error instanceof Error ? r.error.name : r.outcome };
}
