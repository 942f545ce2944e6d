import type { HandleOptions, Receiver, ReceiverAdapter } from '../contracts/receiving.js';
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { HandlerContext } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { isPromise, type Awaitable } from '../base/maybe-async.js';
import { needsClient, resolveOptions, type ReceiverOptions } from '../settings/options.js';
import { handoffPlan, queuedKey } from '../routing/handoff.js';
import { claimAndRun } from '../steps/claim-and-run.js';
import type { RunInput, RunSettings } from '../steps/run-settings.js';
import { createDiagnosis } from '../observing/diagnose.js';
import { intake, isReport } from '../steps/intake.js';
import type { RawDelivery } from '../contracts/delivery.js';
import { answerOf, reportOf } from '../observing/outcome.js';
import type { DeliveryReport, ReceiverResult } from '../contracts/delivery.js';
import { Malformed, parseEvent } from '../steps/parse.js';
import { holdOpen } from '../steps/hold-open.js';
import { readRequest } from '../steps/read-request.js';
import { verifyStep } from '../steps/verify.js';
import type { RawBody, VerifyResult } from '../protocol/signature.js';
import { createRunCore } from './run-core.js';
import { SHORTEST_RETENTION_MS } from '../storage/store.js';
import { ledgerId } from '../storage/ledger.js';
import { createLedgerWriter } from '../observing/ledger-writer.js';
import type { Trace } from '../contracts/delivery.js';
import { createReplay } from '../ledger/replay.js';
import { createOrderGuard } from '../steps/order-guard.js';
import { perMinute, REFUSALS_PER_MINUTE } from '../base/per-minute.js';

/** One delivery's way through the pipeline: when it arrived, its budget, where it came from, its ledger record. */
interface Run {
  startedAt: number;
  budgetMs: number;
  source: HandlerContext['source'];
  waitUntil?: HandleOptions['waitUntil'];
  record?: TransactionRecord;
  trace?: Trace;
}

/** Registered, so that an adapter built against another copy of core finds it too. */
export const ADAPTER = Symbol.for('payhook.receiver.adapter');

/**
 * Create the receiver: verify on raw bytes, parse, deduplicate through the store, route to typed
 * handlers, and answer within the budget whatever the handlers do. The steps live in `pipeline/`,
 * one file each; this only wires them.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! })
 *   .on('payment.success', async (event, ctx) => {
 *     await orders.markPaid(event.merchantReference, ctx.reference);
 *   });
 * export const POST = (request: Request) => receiver.handle(request);
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const o = resolveOptions(options);
  if (o.verifyBeforeHandling) needsClient(o.client, { verify: true });
  const verify = verifyStep(o.secrets);
  const diagnose = createDiagnosis({ secrets: o.secrets, mode: o.mode, verify, now: () => o.clock.now() });
  const { watch, report, settings: inProcess, registration } = createRunCore({ ...o, user: 'receiver' });
  const { handoff } = o;
  // With a handoff the web process only enqueues, under a key of its own; an enqueue that outlives
  // the budget gets 503, never a 202 that could lose the event.
  const plan = handoff && handoffPlan(handoff, () => o.clock.now());
  const settings: RunSettings = plan
    ? { ...inProcess, planFor: () => plan, dedupeKey: (e) => queuedKey(o.dedupeKey(e)), afterBudget: 'retry', doneOutcome: 'queued' }
    : inProcess;
  const noHandlersHere = () => {
    if (handoff)
      throw new TypeError(
        '[@payhook/core] this receiver hands events to a queue (handoff): register handlers on the worker, createWorker(...).on(...), not on the receiver.',
      );
  };
  const ledger = o.store.ledger;
  const writer = ledger && createLedgerWriter(ledger, o.log, () => o.clock.now());
  // Late outcomes (after a 202) reach the ledger too, as an update of the delivery's record.
  if (writer) settings.report = (r) => (r.late && writer.late(r), report(r));
  // Refusals (anyone can send them) get a share of log lines a minute; a minute that skipped some says so once.
  const mayLogRefusal = perMinute(
    REFUSALS_PER_MINUTE,
    () => o.clock.now(),
    (skipped, since) =>
      o.log.write(
        'warn',
        { skipped },
        `[@payhook/core] ${skipped} more refused deliveries (401, 405, 408, 413, unreadable uploads) were not logged in the minute from ${new Date(since).toISOString()}: at most ${REFUSALS_PER_MINUTE} a minute are, so that a flood of them costs your logs little. Metrics count every one.`,
      ),
  );
  const finish = (r: DeliveryReport, run: Run, refusal = false) => {
    // Only answers to the service count for the loop watch; a reconcile or a replay has no deadline.
    const blocked = run.budgetMs !== Infinity ? watch.answered() : undefined;
    if (blocked) r.loopBlocked = blocked;
    r.durationMs = o.clock.now() - run.startedAt;
    if (run.trace) {
      r.deliveryId = run.trace.id;
      writer!.answered(run.trace, r);
    }
    // Only a webhook's refusals: a replay's were asked for by whoever runs it.
    return answerOf(report(r, refusal && run.source === 'webhook' && !mayLogRefusal()));
  };
  const traceOf = (startedAt: number, source: Trace['source']): Trace | undefined =>
    writer && { id: ledgerId(startedAt), receivedAt: startedAt, source };

  function pipeline(delivery: RawDelivery, run: Run): Awaitable<ReceiverResult> {
    const body = intake(delivery, o.maxBodyBytes);
    if (isReport(body)) return finish(body, run, true);
    if (run.trace) {
      run.trace.body = body;
      run.trace.signatureHeader = delivery.signature;
    }
    const verified = verify(body, delivery.signature);
    return isPromise(verified) ? verified.then((v) => afterVerify(v, body, delivery, run)) : afterVerify(verified, body, delivery, run);
  }
  function afterVerify(v: VerifyResult, body: RawBody, delivery: RawDelivery, run: Run): Awaitable<ReceiverResult> {
    if (run.trace) run.trace.verified = v.ok;
    if (!v.ok) {
      const { signature: header, signatureHeaderSeen } = delivery;
      // The diagnosis only adds to the log line: the answer is the bare 401 whatever it finds, or if it fails.
      return diagnose(v, { body, header, signatureHeaderSeen }).then(
        (d) => finish({ ...d, ...reportOf('unauthorized') }, run, true),
        () => finish(reportOf('unauthorized'), run, true),
      );
    }
    const event = parseEvent(body);
    if (event instanceof Malformed) return finish(event.report(), run);
    return runEvent(event, v.secretIndex, run);
  }
  // The ordering guard: half the budget for the earlier events, the rest for this one.
  const guard =
    o.ordering &&
    createOrderGuard({
      ...settings,
      ordering: o.ordering,
      store: o.store,
      client: o.client,
      log: o.log,
      retentionMs: o.retentionMs ?? o.store.retentionMs ?? SHORTEST_RETENTION_MS,
      dispatch: (event, record) => receiver.dispatch(event, { source: 'reconcile', record }),
    });
  function runEvent(event: PaymentEvent, secretIndex: number | null, run: Run): Awaitable<ReceiverResult> {
    const held = guard ? guard(event, run.budgetMs / 2) : undefined;
    if (held === undefined) return claimEvent(event, secretIndex, run);
    return held.then((r) =>
      r
        ? finish({ ...r, reference: event.reference, event: event.event, source: run.trace?.source ?? run.source }, run)
        : claimEvent(event, secretIndex, { ...run, budgetMs: run.budgetMs - (o.clock.now() - run.startedAt) }),
    );
  }
  function claimEvent(event: PaymentEvent, secretIndex: number | null, run: Run): Awaitable<ReceiverResult> {
    const { startedAt, budgetMs, waitUntil, trace, record } = run;
    const source = trace?.source ?? run.source;
    // A forced replay claims a key of its own, so a done event runs again, once per replay.
    const key = trace?.forced ? keyOf(event, trace.id) : undefined;
    const input: RunInput = { secretIndex, source, budgetMs, startedAt, waitUntil, record, key, deliveryId: trace?.id };
    const done = claimAndRun(settings, event, input);
    return isPromise(done) ? done.then((r) => finish(r, run)) : finish(done, run);
  }
  const keyOf = (event: PaymentEvent, forcedBy: string) => {
    const key = `forced:${forcedBy}:${o.dedupeKey(event)}`;
    return plan ? queuedKey(key) : key;
  };
  // Whatever a step throws (a bug, or an input no step foresaw) ends in a bare 500 that is logged:
  // never an unhandled rejection that stops the process, never internal text in the answer.
  const crashed = (error: unknown, run: Run | undefined): ReceiverResult => {
    try {
      return run ? finish(reportOf('failed', { error }), run) : answerOf(report(reportOf('failed', { error })));
    } catch {
      return answerOf(reportOf('failed'));
    }
  };
  const process = async (delivery: RawDelivery) => {
    const startedAt = o.clock.now();
    const run: Run = { startedAt, budgetMs: o.budgetMs, source: 'webhook', trace: traceOf(startedAt, 'webhook') };
    try {
      return await pipeline(delivery, run);
    } catch (error) {
      return crashed(error, run);
    }
  };
  const replays =
    writer &&
    createReplay(ledger!, writer, {
      signed: (delivery, trace) => pipeline(delivery, { startedAt: trace.receivedAt, budgetMs: Infinity, source: 'replay', trace }),
      unsigned: (event, trace, record) =>
        runEvent(event, null, { startedAt: trace.receivedAt, budgetMs: Infinity, source: 'replay', record, trace }),
      refused: (r, trace) => finish(r, { startedAt: trace.receivedAt, budgetMs: Infinity, source: 'replay', trace }),
      trace: (replayOf, forced) => ({ ...traceOf(o.clock.now(), 'replay')!, replayOf, forced }),
      client: o.client,
    });

  const receiver: Receiver = {
    ...registration(() => receiver, noHandlersHere),
    async handle(request, handleOptions = {}) {
      let run: Run | undefined;
      let hold: ReturnType<typeof holdOpen> | undefined;
      let r: ReceiverResult;
      try {
        const delivery = await readRequest(request, o, handleOptions.framework);
        // As on the Node bridge, which reads the body before `process`: durations run from the body's arrival.
        const startedAt = o.clock.now();
        hold = handleOptions.waitUntil && !handoff ? holdOpen(handleOptions.waitUntil) : undefined;
        run = { startedAt, budgetMs: o.budgetMs, source: 'webhook', waitUntil: hold?.handOver, trace: traceOf(startedAt, 'webhook') };
        r = await pipeline(delivery, run);
        // The ledger writes after the answer: on a platform that freezes once it has answered, under its waitUntil.
        if (writer) handleOptions.waitUntil?.(writer.idle());
      } catch (error) {
        r = crashed(error, run);
      } finally {
        hold?.release();
      }
      // A copy: the shared headers are frozen, and @hono/node-server 1.x's Response adds Content-Length to the object it is given.
      return new Response(r.body, { status: r.status, headers: { ...r.headers } });
    },
    async dispatch(event, opts = {}) {
      const startedAt = o.clock.now();
      const source = opts.source ?? 'reconcile';
      const trace = traceOf(startedAt, source);
      // A recovered event has no signed bytes: its JSON is what a retry of its dead letter runs again.
      if (trace) trace.body = JSON.stringify(event);
      const r = await runEvent(event, null, { startedAt, budgetMs: Infinity, source, record: opts.record, trace });
      return r.report;
    },
    async replay(id, replayOptions) {
      if (!replays)
        throw new Error(
          '[@payhook/core] replay needs a ledger: create the store with a `ledger` option (memoryStore, redisStore or postgresStore({ ledger: true })).',
        );
      return replays.replay(id, replayOptions);
    },
    store: o.store,
    dedupeKey: o.dedupeKey,
  };
  const bodyDeadline = { ms: o.bodyTimeoutMs, clock: o.clock };
  const fail = (error: unknown) => crashed(error, undefined);
  const adapter: ReceiverAdapter = { process, fail, maxBodyBytes: o.maxBodyBytes, bodyDeadline, signatureHeader: o.signatureHeader };
  Object.defineProperty(receiver, ADAPTER, { value: adapter });
  return receiver;
}
