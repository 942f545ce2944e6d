import { metrics, SpanKind, SpanStatusCode, trace, type Attributes, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import { OUTCOMES, outcomesWhere, RECOVERED, type DeliveryOutcome } from '../protocol/outcomes.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { levelOf } from './report.js';
import type { Telemetry } from '../contracts/handling.js';

/** What `openTelemetry` takes: the tracer and meter, when not the global ones. */
export interface OpenTelemetryOptions {
  /** Default: `trace.getTracer('@payhook/core')`, from the globally registered provider (a no-op until an SDK is). */
  tracer?: Tracer;
  /** Default: `@payhook/core`'s meter from the globally registered provider, looked up again when another is registered. */
  meter?: Meter;
}

const SCOPE = '@payhook/core';
/** Outcomes after which this delivery's handlers have run (from the one table, OUTCOMES). */
const HANDLERS_RAN: ReadonlySet<DeliveryOutcome> = new Set(outcomesWhere((f) => f.handlers === 'ran'));
/** Answers that leave the handler running: their span stays open until its late outcome. */
const ANSWERED_EARLY: ReadonlySet<DeliveryOutcome> = new Set(outcomesWhere((f) => f.handlers === 'running'));
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
  // The tracer API hands out a proxy that follows the provider registered later; the meter API does
  // not, so without a meter given the instruments are made again whenever the global provider changes.
  let provider: unknown;
  let m = options.meter ? instruments(options.meter) : undefined;
  const meter = () => {
    if (options.meter) return m!;
    const current = metrics.getMeterProvider();
    if (current !== provider) {
      provider = current;
      m = instruments(current.getMeter(SCOPE));
    }
    return m!;
  };
  const open = new Map<string, Span>();

  const finish = (span: Span, r: DeliveryReport, failed: boolean, now: number) => {
    if (failed) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: r.outcome });
      if (r.error instanceof Error) span.recordException(r.error, now);
    }
    span.end(now);
  };

  return {
    record(r, now) {
      const i = meter();
      const seconds = (r.durationMs ?? 0) / 1000;
      const outcome = OUTCOME[r.outcome];
      const failed = levelOf(r) === 'error';
      if (r.late) {
        i.lateOutcomes.add(1, outcome);
        if (HANDLERS_RAN.has(r.outcome)) i.handlerTime.record(seconds, outcome);
        const span = r.dedupeKey === undefined ? undefined : open.get(r.dedupeKey);
        if (span === undefined) return;
        open.delete(r.dedupeKey!);
        span.setAttribute('payhook.late', true);
        span.setAttribute('payhook.late_outcome', r.outcome);
        if (failed) span.setAttribute('error.type', errorType(r));
        span.addEvent('payhook.late_outcome', outcome, now);
        return finish(span, r, failed, now);
      }
      i.deliveries.add(1, deliveryAttributes(r));
      i.answerTime.record(seconds, outcome);
      const dedupe = DEDUPE[r.outcome];
      if (dedupe !== undefined) i.duplicates.add(1, dedupe);
      if (HANDLERS_RAN.has(r.outcome)) i.handlerTime.record(seconds, outcome);
      if (r.source === 'reconcile' && RECOVERED.has(r.outcome)) i.recovered.add(1, outcome);

      const span = tracer.startSpan('payhook.delivery', {
        kind: SpanKind.INTERNAL,
        startTime: now - (r.durationMs ?? 0),
        attributes: attributesOf(r, failed),
      });
      span.addEvent('payhook.answered', STATUS_ATTRIBUTES(r.status), now);
      if (ANSWERED_EARLY.has(r.outcome) && r.dedupeKey !== undefined) {
        if (open.size >= MAX_OPEN) {
          const [key, oldest] = open.entries().next().value as [string, Span];
          open.delete(key);
          oldest.end(now);
        }
        open.set(r.dedupeKey, span);
        return;
      }
      finish(span, r, failed, now);
    },
  };
}

/** The metric instruments, on one meter. */
function instruments(meter: Meter) {
  return {
    deliveries: meter.createCounter('payhook.deliveries', { unit: '{delivery}', description: 'Deliveries answered, by outcome' }),
    answerTime: meter.createHistogram('payhook.answer.duration', {
      unit: 's',
      description: 'From the body of a delivery arriving to its answer',
    }),
    handlerTime: meter.createHistogram('payhook.handler.duration', {
      unit: 's',
      description: "From the body of a delivery arriving to its handlers' end, for deliveries whose handlers ran",
    }),
    lateOutcomes: meter.createCounter('payhook.late_outcomes', {
      unit: '{delivery}',
      description: 'Outcomes of handlers that finished after their delivery was answered (202 or 503)',
    }),
    duplicates: meter.createCounter('payhook.duplicates', {
      unit: '{delivery}',
      description: 'Copies of events already done, or running elsewhere',
    }),
    recovered: meter.createCounter('payhook.reconcile.recovered', {
      unit: '{event}',
      description: 'Events a reconcile ran that no delivery had',
    }),
  };
}

// Attribute objects are made once and shared: the SDK copies what it keeps, and every delivery
// would otherwise build and drop them (BENCHMARKS.md, issue 15).
const OUTCOME = Object.fromEntries(
  Object.keys(OUTCOMES).map((o): [string, Attributes] => [o, Object.freeze({ 'payhook.outcome': o })]),
) as Record<DeliveryOutcome, Attributes>;
/** What the store said of a copy: done already, or running elsewhere. */
const DEDUPE_RESULT: Partial<Record<DeliveryOutcome, string>> = { duplicate: 'done', 'in-progress': 'running' };
const DEDUPE = Object.fromEntries(
  Object.entries(DEDUPE_RESULT).map(([o, result]): [string, Attributes] => [o, Object.freeze({ 'payhook.dedupe.result': result })]),
) as Partial<Record<DeliveryOutcome, Attributes>>;
const byKey = new Map<string, Attributes>();
function deliveryAttributes(r: DeliveryReport): Attributes {
  const source = r.source ?? 'webhook';
  const { account } = r;
  // Only known accounts reach a report, so the platform's own accounts bound this map (and the metric's series).
  const key = account === undefined ? `${r.outcome} ${r.status} ${source}` : `${r.outcome} ${r.status} ${source} ${account}`;
  let a = byKey.get(key);
  if (a === undefined) {
    const base = { 'payhook.outcome': r.outcome, 'http.response.status_code': r.status, 'payhook.source': source };
    byKey.set(key, (a = Object.freeze(account === undefined ? base : { ...base, 'payhook.account': account })));
  }
  return a;
}
const byStatus = new Map<number, Attributes>();
const STATUS_ATTRIBUTES = (status: number): Attributes => {
  let a = byStatus.get(status);
  if (a === undefined) byStatus.set(status, (a = Object.freeze({ 'http.response.status_code': status })));
  return a;
};

/** A report as span attributes: OpenTelemetry's names where its conventions have one, `payhook.*` otherwise. */
function attributesOf(r: DeliveryReport, failed: boolean): Attributes {
  const a: Attributes = {
    'http.response.status_code': r.status,
    'payhook.outcome': r.outcome,
    'payhook.source': r.source ?? 'webhook',
    'payhook.late': false,
    'payhook.dedupe.result': DEDUPE_RESULT[r.outcome] ?? (r.attempt !== undefined ? 'claimed' : 'none'),
  };
  if (r.account !== undefined) a['payhook.account'] = r.account;
  if (r.event !== undefined) a['payhook.event'] = r.event;
  if (r.reference !== undefined) a['payhook.reference'] = r.reference;
  if (r.dedupeKey !== undefined) a['payhook.dedupe.key'] = r.dedupeKey;
  if (r.attempt !== undefined) a['payhook.attempt'] = r.attempt;
  if (r.secretIndex !== undefined) a['payhook.secret.index'] = r.secretIndex;
  if (r.reason !== undefined) a['payhook.signature.reason'] = r.reason;
  if (failed) a['error.type'] = errorType(r);
  return a;
}

/** `error.type`, as the conventions name it: the error's class, or the outcome when there is none. */
const errorType = (r: DeliveryReport): string => (r.error instanceof Error ? r.error.name : r.outcome);
