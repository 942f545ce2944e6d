import type { ErrorHandler, EventHandler, HandlerOptions, PaymentEventName } from '@payhook/core';
import { createJobRunner, type JobRunner, type QueuedEvent, type RunOptions } from '@payhook/core/queue';
import type PgBoss from 'pg-boss';
import { NAME, type PayhookPgBossQueue } from './queue.js';

/** The run options of a receiver but `dedupeKey`: a worker claims the key the web process computed, carried in the job. */
export interface WorkerOptions extends Omit<RunOptions, 'dedupeKey'> {
  queue: PayhookPgBossQueue;
  /** Jobs this process runs at once (one pg-boss poller each). Default 4. */
  concurrency?: number;
  /** How often an idle poller looks for jobs. Default 0.5 s, pg-boss's shortest. */
  pollingIntervalSeconds?: number;
}

export interface PayhookWorker {
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): PayhookWorker;
  onAny(handler: EventHandler, options?: HandlerOptions): PayhookWorker;
  onError(handler: ErrorHandler): PayhookWorker;
  /** Start taking jobs; resolves once pg-boss runs. */
  start(): Promise<void>;
  /** Stop taking jobs and wait for the running ones. */
  close(): Promise<void>;
  readonly runner: JobRunner;
}

/**
 * Consume a payhook queue on pg-boss: each job runs the typed handlers once, through the store,
 * with the same `ctx` a receiver gives plus `ctx.job`. A handler that throws is retried with the
 * queue's backoff; NonRetriableError, or a failure on the last attempt, moves the job to the
 * dead-letter queue. The store's `transactional()` commits an effect with the event's done record.
 *
 * @example
 * const worker = createWorker({ queue, store, concurrency: 8 })
 *   .on('payment.success', store.transactional(async (event, ctx, client) => {
 *     await client.query('update orders set paid = true where id = $1', [event.merchantReference]);
 *   }));
 * await worker.start();
 */
export function createWorker(options: WorkerOptions): PayhookWorker {
  const { queue, concurrency = 4, pollingIntervalSeconds = 0.5, ...runOptions } = options;
  if (!queue || typeof queue.ready !== 'function') throw new TypeError(`${NAME} createWorker needs the queue: createWorker({ queue: pgBossQueue({ store, connectionString }), store }).`);
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new RangeError(`${NAME} concurrency must be a whole number from 1; got ${concurrency}.`);
  const runner = createJobRunner(runOptions);
  const ids: string[] = [];
  const running = new Set<Promise<unknown>>();

  function processJob(jobs: PgBoss.JobWithMetadata<QueuedEvent>[]) {
    const run = runJob(jobs);
    running.add(run);
    void run.then(() => running.delete(run), () => running.delete(run));
    return run;
  }

  async function runJob([job]: PgBoss.JobWithMetadata<QueuedEvent>[]) {
    if (!job) return;
    const info = { id: job.id, attempt: job.retryCount + 1, maxAttempts: job.retryLimit + 1, queue: queue.name };
    const verdict = await runner.run(job.data, info);
    if (verdict.action === 'complete') return verdict.report.outcome;
    if (verdict.action === 'retry') throw verdict.error;
    const dead = { ...job.data, error: verdict.error.message, attempts: info.attempt, deadAt: Date.now() };
    await queue.boss.send(queue.deadLetterName, dead);
    return 'dead-letter';
  }

  const worker: PayhookWorker = {
    on(event, handler, handlerOptions) {
      runner.on(event, handler, handlerOptions);
      return worker;
    },
    onAny(handler, handlerOptions) {
      runner.onAny(handler, handlerOptions);
      return worker;
    },
    onError(handler) {
      runner.onError(handler);
      return worker;
    },
    async start() {
      if (ids.length > 0) return;
      const boss = await queue.ready();
      const workOptions = { batchSize: 1, includeMetadata: true as const, pollingIntervalSeconds };
      for (let i = 0; i < concurrency; i++) ids.push(await boss.work<QueuedEvent>(queue.name, workOptions, processJob));
    },
    async close() {
      await Promise.all(ids.splice(0).map((id) => queue.boss.offWork({ id })));
      // offWork stops the pollers; the jobs they took are still running.
      await Promise.allSettled(running);
    },
    runner,
  };
  return worker;
}
