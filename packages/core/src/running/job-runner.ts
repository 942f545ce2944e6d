import type { EventHandler, HandlerOptions } from '../contracts/handling.js';
import { checkPaymentEvent, EventShapeError } from '../protocol/event-check.js';
import type { PaymentEvent, PaymentEventName } from '../protocol/event-schema.js';
import type { JobInfo } from '../contracts/delivery.js';
import type { QueuedEvent } from '../contracts/handling.js';
import { needsClient, resolveRunOptions, SIGNATURE_HEADER, type RunOptions } from '../settings/options.js';
import { isAccountName } from '../accounts/account-name.js';
import { claimAndRun } from '../steps/claim-and-run.js';
import type { RunInput } from '../steps/run-settings.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport, ErrorHandler } from '../contracts/delivery.js';
import { OUTCOMES } from '../protocol/outcomes.js';
import { createRunCore } from './run-core.js';
import type { Store } from '../storage/store-contract.js';

/** What the queue engine does with a job once the runner has run it. */
export type JobVerdict =
  /** Done: the handlers ran, or had run before, or another live run is running them, or nothing here handles the event. */
  | { action: 'complete'; report: DeliveryReport }
  /** Run it again after the engine's backoff: a handler threw, or the store could not be reached. */
  | { action: 'retry'; report: DeliveryReport; error: Error }
  /** Give up and move it to the dead-letter queue: NonRetriableError, the last attempt failed, or the job is not one payhook wrote. */
  | { action: 'dead-letter'; report: DeliveryReport; error: Error };

/** The runner `createJobRunner` makes: handlers by event name, and `run` for each job the engine takes. */
export interface JobRunner {
  /** Run `handler` for one event name or several. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): JobRunner;
  /** Run `handler` for every event, after the `on` handlers of its name. */
  onAny(handler: EventHandler, options?: HandlerOptions): JobRunner;
  /** Called for every failure: handler errors, store errors, jobs that are not payhook's. */
  onError(handler: ErrorHandler): JobRunner;
  /** Run one job's event through the store and the handlers, and say what the engine should do with the job. Never rejects. */
  run(data: unknown, job: JobInfo): Promise<JobVerdict>;
  /** Log an engine's own failure (a job that could not be fetched or marked done) through the worker's logger, at error. */
  logError(message: string, error: unknown): void;
  /** The store the runner claims jobs' keys in. */
  readonly store: Store;
}

/**
 * The engine-independent half of a queue worker: claims the job's dedupe key in the store, runs
 * the typed handlers with the same `ctx` a receiver gives (plus `ctx.job`), keeps the claim alive
 * while they run, records the outcome, and turns it into a verdict for the engine. The queue
 * packages (`@payhook/queue-bullmq`, `@payhook/queue-pg-boss`) wrap it in their `createWorker`.
 *
 * @example
 * const runner = createJobRunner({ store }).on('payment.success', (event, ctx) => orders.markPaid(event.merchantReference));
 * const verdict = await runner.run(job.data, { id: job.id, attempt: 1, maxAttempts: 5, queue: 'payhook' });
 */
export function createJobRunner(options: Omit<RunOptions, 'dedupeKey'> = {}): JobRunner {
  const o = resolveRunOptions(options);
  if (o.verifyBeforeHandling) needsClient(o.client, { verify: true });
  const { report, settings, registration } = createRunCore({
    ...o,
    afterBudget: 'accept',
    onInProgress: 'wait',
    signatureHeader: SIGNATURE_HEADER,
    mode: undefined,
    user: 'worker',
  });

  async function run(data: unknown, job: JobInfo): Promise<JobVerdict> {
    const startedAt = o.clock.now();
    const queued = readJob(data);
    if (queued instanceof Error) {
      const r = reportOf('invalid', { job, error: queued, durationMs: 0 });
      return { action: 'dead-letter', report: report(r), error: queued };
    }
    // Another run may hold the claim: the same job running elsewhere (stalled, or expired by its
    // engine while it ran), or a worker killed mid-handler whose lease has not lapsed yet. Wait up to
    // two leases rather than spend one of the job's attempts.
    const input: RunInput = {
      secretIndex: queued.secretIndex,
      account: queued.account,
      source: queued.source,
      budgetMs: Infinity,
      startedAt,
      key: queued.dedupeKey,
      job,
      waitMs: 2 * o.leaseMs,
    };
    const r = await claimAndRun(settings, queued.event, input);
    r.job = job;
    r.durationMs = o.clock.now() - startedAt;
    const verdict = verdictOf(r, job);
    report(r);
    return verdict;
  }

  const runner: JobRunner = {
    ...registration(() => runner),
    run,
    logError: (message, error) => o.log.write('error', { err: error }, message),
    store: o.store,
  };
  return runner;
}

/**
 * The job's verdict, from the one table (OUTCOMES' `job`): `in-progress` completes, since a copy
 * still held after two leases has a live run extending the claim, and that run's own job finishes
 * the event or retries it; a retry on the job's last attempt goes to the dead letters instead.
 */
function verdictOf(r: DeliveryReport, job: JobInfo): JobVerdict {
  const verdict = OUTCOMES[r.outcome].job;
  if (verdict === 'complete') return { action: 'complete', report: r };
  const action = verdict === 'retry' && job.attempt < job.maxAttempts ? 'retry' : 'dead-letter';
  return { action, report: r, error: asError(r) };
}

const asError = (r: DeliveryReport): Error =>
  r.error instanceof Error
    ? r.error
    : new Error(`[@payhook/core] job ${r.job?.id ?? '?'} ended ${r.outcome}${r.error === undefined ? '' : `: ${String(r.error)}`}`);

/** The job as the receiver's handoff wrote it, or why it is not. */
function readJob(data: unknown): QueuedEvent | Error {
  const job = data as Partial<QueuedEvent> | null;
  if (typeof job !== 'object' || job === null || job.v !== 1 || typeof job.dedupeKey !== 'string') {
    return new Error(
      "[@payhook/core] this job was not written by a payhook receiver (no v: 1 and dedupeKey); only a receiver's handoff may add jobs to a payhook queue.",
    );
  }
  const parsed = checkPaymentEvent(job.event);
  if (!parsed.ok) return new EventShapeError(parsed.issues, "the job's event");
  // A receiver writes a known account's name or none: anything else was written past it, and is not run as anyone's.
  if (job.account !== undefined && !isAccountName(job.account)) {
    return new Error(
      `[@payhook/core] this job names the account ${JSON.stringify(String(job.account).slice(0, 80))}, which no payhook receiver writes (1 to 64 letters, digits, _ or -): it goes to the dead letters unrun.`,
    );
  }
  const source = job.source === 'reconcile' || job.source === 'replay' ? job.source : 'webhook';
  return {
    v: 1,
    event: parsed.event,
    dedupeKey: job.dedupeKey,
    source,
    secretIndex: typeof job.secretIndex === 'number' ? job.secretIndex : null,
    account: job.account,
    queuedAt: job.queuedAt ?? 0,
  };
}

/** What a queue package's `createWorker` returns: the runner's router, and the engine's start and close. */
export interface QueueWorker {
  /** Run `handler` for one event name or several. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): this;
  /** Run `handler` for every event, after the `on` handlers of its name. */
  onAny(handler: EventHandler, options?: HandlerOptions): this;
  /** Called for every failure: handler errors, store errors, jobs that are not payhook's. */
  onError(handler: ErrorHandler): this;
  /** Start taking jobs; resolves once connected. */
  start(): Promise<void>;
  /** Stop taking jobs and wait for the running ones. */
  close(): Promise<void>;
  /** The runner the worker runs each job with. */
  readonly runner: JobRunner;
}

/**
 * The worker a queue package returns, around its runner and its engine's `start` and `close`;
 * `extra`'s properties (getters included) are added as they are.
 *
 * @example
 * return queueWorker(runner, { start: () => engine.run(), close: () => engine.close() });
 */
export function queueWorker<T extends object = object>(
  runner: JobRunner,
  engine: { start(): Promise<void>; close(): Promise<void> },
  extra?: T,
): QueueWorker & T {
  const worker: QueueWorker = {
    on(event, handler, handlerOptions) {
      runner.on(event, handler, handlerOptions);
      return this;
    },
    onAny(handler, handlerOptions) {
      runner.onAny(handler, handlerOptions);
      return this;
    },
    onError(handler) {
      runner.onError(handler);
      return this;
    },
    start: () => engine.start(),
    close: () => engine.close(),
    runner,
  };
  return Object.defineProperties(worker, Object.getOwnPropertyDescriptors(extra ?? {})) as QueueWorker & T;
}
