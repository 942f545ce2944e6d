import diagnosticsChannel from 'node:diagnostics_channel';
import { metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type DeliveryReport, type ReceiverOptions } from '../../src/index.js';
import { openTelemetry } from '../../src/otel.js';

const secret = 'whsec_otel_test';

/** The SDK with its in-memory span exporter and metric reader, as its docs set them up for tests. */
function sdk() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  /** Each metric's data points: `[attributes, value]`, value a number or a histogram's count. */
  const read = async () => {
    await reader.forceFlush();
    const points = new Map<string, [Record<string, unknown>, number][]>();
    for (const scope of exporter.getMetrics().at(-1)?.scopeMetrics ?? []) {
      for (const metric of scope.metrics) {
        points.set(
          metric.descriptor.name,
          metric.dataPoints.map((p) => [p.attributes, typeof p.value === 'number' ? p.value : (p.value as { count: number }).count]),
        );
      }
    }
    return points;
  };
  return { spans, tracerProvider, meterProvider, read, shutdown: () => Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]) };
}

/** A run with duplicates, a copy while running, a failure, a 202 whose handler finishes later, a 401 and a reconcile. */
async function run(options: Partial<ReceiverOptions>) {
  // An epoch time, as the real clock gives: the SDK reads a number below performance.now() as a performance timestamp.
  const clock = manualClock(Date.UTC(2026, 10, 25));
  const receiver = createReceiver({
    secret,
    clock,
    budgetMs: 200,
    store: memoryStore({ now: clock.now }),
    logger: {},
    onInProgress: 'retry',
    ...options,
  }).on('payment.success', async (event) => {
    if (event.merchantReference === 'fail') throw new TypeError('the warehouse is unreachable');
    if (event.merchantReference === 'slow') await clock.sleep(500);
  });
  const deliver = (event: object, key = secret) => receiver.handle(signedRequest(event, { secret: key }));
  const once = createEvent('payment.success');
  const statuses = [(await deliver(once)).status, (await deliver(once)).status, (await deliver(once)).status];
  statuses.push((await deliver(createEvent('payment.success', { merchantReference: 'fail' }))).status);
  const slow = createEvent('payment.success', { merchantReference: 'slow' });
  const accepted = deliver(slow);
  await clock.advance(200);
  statuses.push((await accepted).status, (await deliver(slow)).status);
  await clock.advance(300); // t = 500: the 202's handler finishes
  statuses.push((await deliver(createEvent('payment.success'), 'whsec_wrong')).status);
  const recovered = await receiver.dispatch(createEvent('payment.success'), { source: 'reconcile' });
  return { statuses, recovered, slow };
}

afterEach(() => {
  trace.disable();
  metrics.disable();
});

describe('openTelemetry(): spans and metrics through the SDK', () => {
  it('one span per delivery with its attributes; the 202 keeps its span open until its late outcome, recorded on it', async () => {
    const otel = sdk();
    const { statuses, slow } = await run({
      telemetry: openTelemetry({ tracer: otel.tracerProvider.getTracer('t'), meter: otel.meterProvider.getMeter('m') }),
    });
    expect(statuses).toEqual([200, 200, 200, 500, 202, 409, 401]);
    const spans = otel.spans.getFinishedSpans();
    expect(spans).toHaveLength(8);
    expect(new Set(spans.map((s) => s.name))).toEqual(new Set(['payhook.delivery']));
    const outcomes = spans.map((s) => s.attributes['payhook.outcome']);
    expect(outcomes.sort()).toEqual(
      ['accepted', 'duplicate', 'duplicate', 'failed', 'in-progress', 'processed', 'processed', 'unauthorized'].sort(),
    );

    const first = spans.find((s) => s.attributes['payhook.outcome'] === 'processed' && s.attributes['payhook.source'] === 'webhook')!;
    expect(first.attributes).toMatchObject({
      'http.response.status_code': 200,
      'payhook.event': 'payment.success',
      'payhook.dedupe.result': 'claimed',
      'payhook.secret.index': 0,
      'payhook.attempt': 1,
      'payhook.late': false,
    });
    expect(spans.find((s) => s.attributes['payhook.outcome'] === 'duplicate')!.attributes['payhook.dedupe.result']).toBe('done');
    expect(spans.find((s) => s.attributes['payhook.outcome'] === 'in-progress')!.attributes['payhook.dedupe.result']).toBe('running');
    expect(spans.find((s) => s.attributes['payhook.outcome'] === 'unauthorized')!.attributes['payhook.signature.reason']).toBe('mismatch');

    const failed = spans.find((s) => s.attributes['payhook.outcome'] === 'failed')!;
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes['error.type']).toBe('TypeError');
    expect(failed.events.map((e) => e.name)).toEqual(['payhook.answered', 'exception']);

    const late = spans.find((s) => s.attributes['payhook.outcome'] === 'accepted')!;
    expect(late.attributes).toMatchObject({
      'payhook.reference': slow.reference,
      'payhook.late': true,
      'payhook.late_outcome': 'processed',
    });
    // Times on the receiver's clock, from the delivery's arrival.
    const ms = (t: [number, number]) => Math.round(t[0] * 1000 + t[1] / 1e6 - (late.startTime[0] * 1000 + late.startTime[1] / 1e6));
    expect(late.events.map((e) => [e.name, ms(e.time)])).toEqual([
      ['payhook.answered', 200],
      ['payhook.late_outcome', 500],
    ]);
    expect(ms(late.endTime)).toBe(500);
    await otel.shutdown();
  });

  it('counts deliveries by outcome, duplicates, late outcomes and reconcile recoveries, and times answers and handlers', async () => {
    const otel = sdk();
    const { recovered } = await run({
      telemetry: openTelemetry({ tracer: otel.tracerProvider.getTracer('t'), meter: otel.meterProvider.getMeter('m') }),
    });
    expect(recovered.outcome).toBe('processed');
    const points = await otel.read();
    const byOutcome = Object.fromEntries(
      points.get('payhook.deliveries')!.map(([a, v]) => [`${String(a['payhook.outcome'])}/${String(a['payhook.source'])}`, v]),
    );
    expect(byOutcome).toEqual({
      'processed/webhook': 1,
      'duplicate/webhook': 2,
      'failed/webhook': 1,
      'accepted/webhook': 1,
      'in-progress/webhook': 1,
      'unauthorized/webhook': 1,
      'processed/reconcile': 1,
    });
    expect(
      points
        .get('payhook.duplicates')!
        .map(([a, v]) => [a['payhook.dedupe.result'], v])
        .sort(),
    ).toEqual([
      ['done', 2],
      ['running', 1],
    ]);
    expect(points.get('payhook.late_outcomes')).toEqual([[{ 'payhook.outcome': 'processed' }, 1]]);
    expect(points.get('payhook.reconcile.recovered')).toEqual([[{ 'payhook.outcome': 'processed' }, 1]]);
    const answered = points.get('payhook.answer.duration')!.reduce((n, [, count]) => n + count, 0);
    expect(answered).toBe(8);
    // Handlers ran for the first delivery, the failure, the reconcile, and (late) the 202.
    expect(points.get('payhook.handler.duration')!.reduce((n, [, count]) => n + count, 0)).toBe(4);
    await otel.shutdown();
  });

  it('uses the globally registered SDK by default, even one registered after it was made, and is a no-op until then', async () => {
    const telemetry = openTelemetry();
    const bare = await run({ telemetry });
    expect(bare.statuses).toEqual([200, 200, 200, 500, 202, 409, 401]);
    const otel = sdk();
    trace.setGlobalTracerProvider(otel.tracerProvider);
    metrics.setGlobalMeterProvider(otel.meterProvider);
    await run({ telemetry });
    expect(otel.spans.getFinishedSpans()).toHaveLength(8);
    expect((await otel.read()).get('payhook.deliveries')!.length).toBeGreaterThan(0);
    await otel.shutdown();
  });

  it("names a platform's account on each span and on the deliveries metric, and no account a stranger made up", async () => {
    const otel = sdk();
    const clock = manualClock(Date.UTC(2026, 10, 28));
    const receiver = createReceiver({
      clock,
      store: memoryStore({ now: clock.now }),
      logger: {},
      telemetry: openTelemetry({ tracer: otel.tracerProvider.getTracer('t'), meter: otel.meterProvider.getMeter('t') }),
      accounts: { resolve: (name) => (name === 'acct_A' ? { secret: 'whsec_a' } : undefined) },
    }).onAny(() => {});
    const post = (account: string, key: string) =>
      receiver.handle(signedRequest(createEvent('payment.success'), { secret: key, url: `https://platform.example/webhooks/${account}` }));
    expect([(await post('acct_A', 'whsec_a')).status, (await post('acct_Z', 'whsec_a')).status]).toEqual([200, 401]);
    const spans = otel.spans.getFinishedSpans();
    expect(spans.map((s) => s.attributes['payhook.account'])).toEqual(['acct_A', undefined]);
    const deliveries = (await otel.read()).get('payhook.deliveries')!;
    expect(deliveries.map(([a]) => a['payhook.account'])).toEqual(['acct_A', undefined]);
    await otel.shutdown();
  });

  it('a telemetry that throws changes no answer', async () => {
    const { statuses } = await run({
      telemetry: {
        record: () => {
          throw new Error('exporter down');
        },
      },
    });
    expect(statuses).toEqual([200, 200, 200, 500, 202, 409, 401]);
  });
});

describe('node:diagnostics_channel', () => {
  it('publishes every report on payhook:delivery to its subscribers, late outcomes included', async () => {
    const seen: DeliveryReport[] = [];
    const listener = (message: unknown) => void seen.push(message as DeliveryReport);
    diagnosticsChannel.subscribe('payhook:delivery', listener);
    try {
      await run({});
    } finally {
      diagnosticsChannel.unsubscribe('payhook:delivery', listener);
    }
    expect(seen.map((r) => `${r.outcome}${r.late ? ' (late)' : ''}`)).toEqual([
      'processed',
      'duplicate',
      'duplicate',
      'failed',
      'accepted',
      'in-progress',
      'processed (late)',
      'unauthorized',
      'processed',
    ]);
  });
});
