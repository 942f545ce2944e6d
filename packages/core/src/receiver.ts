import type { TransactionRecord } from './api-schema.js';
import type { EventHandler, HandlerContext, HandlerOptions } from './event-router.js';
import type { PaymentEvent, PaymentEventName } from './event-schema.js';
import { isPromise, type Awaitable } from './maybe-async.js';
import { needsClient, resolveOptions, type ReceiverOptions } from './options.js';
import { handoffPlan, queuedKey } from './handoff.js';
import { claimAndRun, type RunInput, type RunSettings } from './pipeline/claim-and-run.js';
import { createDiagnosis } from './pipeline/diagnose.js';
import { intake, isReport, type RawDelivery } from './pipeline/intake.js';
import { answerOf, reportOf, type DeliveryReport, type ErrorHandler, type ReceiverResult } from './pipeline/outcome.js';
import { Malformed, parseEvent } from './pipeline/parse.js';
import { holdOpen } from './pipeline/hold-open.js';
import { readRequest } from './pipeline/read-request.js';
import type { BodyDeadline } from './read-body.js';
import { verifyStep } from './pipeline/verify.js';
import type { RawBody, VerifyResult } from './signature.js';
import { createRunCore } from './run-core.js';
import { SHORTEST_RETENTION_MS, type Store } from './store.js';
import { ledgerId } from './ledger.js';
import { createLedgerWriter, type Trace } from './pipeline/ledger-writer.js';
import { createReplay, type ReplayOptions } from './replay.js';
import { createOrderGuard } from './pipeline/order-guard.js';
import { perMinute, REFUSALS_PER_MINUTE } from './per-minute.js';

export interface Receiver {
  /** Run `handler` for one event or several; `{ verify: true }` runs it only once the service's record agrees. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): Receiver;
  onAny(handler: EventHandler, options?: HandlerOptions): Receiver;
  /** Called for every failure: handler errors (also after a 202), rejected events, store errors. */
  onError(handler: ErrorHandler): Receiver;
  /**
   * The web-standard entry: Hono, Next's App Router, Bun, Deno, workers. Pass the platform's
   * `waitUntil` (a Worker's `ctx.waitUntil`, Vercel's, Next's `after`) so that a handler still
   * running at the budget is kept alive after the 202.
   */
  handle(request: Request, options?: HandleOptions): Promise<Response>;
  /**
   * Run a delivery recorded in the ledger again, through the same steps: the signature checked on
   * the stored bytes, the same dedupe (a done event answers `duplicate` unless `force`, which runs
   * it under a key of its own and is recorded). Resolves once the replay's own record is written.
   */
  replay(id: string, options?: ReplayOptions): Promise<DeliveryReport>;
  /** Run an event that needs no signature check (recovered by a reconcile) through the same store and router. */
  dispatch(event: PaymentEvent, options?: { source?: HandlerContext['source']; record?: TransactionRecord }): Promise<DeliveryReport>;
  readonly store: Store;
  readonly dedupeKey: (event: PaymentEvent) => string;
}

/** One delivery's way through the pipeline: when it arrived, its budget, where it came from, its ledger record. */
interface Run {
  startedAt: number;
  budgetMs: number;
  source: HandlerContext['source'];
  waitUntil?: HandleOptions['waitUntil'];
  record?: TransactionRecord;
  trace?: Trace;
}

export interface HandleOptions {
  /** Keeps work alive after the answer on platforms that would otherwise freeze or cancel it. */
  waitUntil?: (work: Promise<unknown>) => void;
  /** The framework's name, for the error that says how to mount payhook when the body was already read. */
  framework?: string;
}

/** What adapters get of a receiver, through `adapterOf` from `@payhook/core/adapter`. */
export interface ReceiverAdapter {
  /** The pipeline on what the adapter read: bytes, or why there are none. */
  process(delivery: RawDelivery): Promise<ReceiverResult>;
  /** The bare 500 for an error outside the pipeline (in the adapter itself), logged through the receiver. Never throws. */
  fail(error: unknown): ReceiverResult;
  readonly maxBodyBytes: number;
  /** How long a body may take to arrive, on the receiver's clock; past it the delivery is `too-slow`. */
  readonly bodyDeadline: BodyDeadline;
  /** The header to read the signature from, lower case. */
  readonly signatureHeader: string;
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
