import { createJobRunner, queueWorker, type QueueWorker, type QueuedEvent, type RunOptions } from '@payhook/core/queue';
import { NAME, type BossJob, type PgBossLike } from './boss.js';
import type { PayhookPgBossQueue } from './queue.js';

/** The run options of a receiver but `dedupeKey`: a worker claims the key the web process computed, carried in the job. */
export interface WorkerOptions extends Omit<RunOptions, 'dedupeKey'> {
  /** The queue whose jobs this worker runs. */
  queue: PayhookPgBossQueue;
  /** Jobs this process runs at once. Default 4. */
  concurrency?: number;
  /** How long an idle slot waits before it asks for a job again. Default 500 ms; a slot that got one asks again at once. */
  pollingIntervalMs?: number;
}

/** A worker as `createWorker` makes it: handlers by event name, `start` and `close`. */
export type PayhookWorker = QueueWorker;

/**
 * Consume a payhook queue on pg-boss: each job runs the typed handlers once, through the store,
 * with the same `ctx` a receiver gives plus `ctx.job`. A handler that throws is retried with the
 * queue's backoff; NonRetriableError, or a failure on the last attempt, moves the job to the
 * dead-letter queue. The store's `transactional()` commits an effect with the event's done record.
 *
 * Each of `concurrency` slots fetches one job, runs it, and marks it completed or failed itself:
 * pg-boss 10's own `work()` leaves that last call unawaited (a database error then ends the
 * process) and waits a polling interval after every job, which caps a busy worker. `fetch`,
 * `complete` and `fail` are called the same way in pg-boss 10, 11 and 12.
 *
 * @example
 * const worker = createWorker({ queue, store, concurrency: 8 })
 *   .on('payment.success', store.transactional(async (event, ctx, client) => {
 *     await client.query('update orders set paid = true where id = $1', [event.merchantReference]);
 *   }));
 * await worker.start();
 */
export function createWorker(options: WorkerOptions): PayhookWorker {
  const { queue, concurrency = 4, pollingIntervalMs = 500, ...runOptions } = options;
  if (!queue || typeof queue.ready !== 'function')
    throw new TypeError(`${NAME} createWorker needs the queue: createWorker({ queue: pgBossQueue({ store, connectionString }), store }).`);
  if (!(Number.isInteger(concurrency) && concurrency >= 1))
    throw new RangeError(`${NAME} concurrency must be a whole number from 1; got ${concurrency}.`);
  const runner = createJobRunner(runOptions);
  const log = (message: string, error: unknown) => runner.logError(`${NAME} ${message}`, error);
  let stopping = false;
  let slots: Promise<void>[] = [];
  const sleeping = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleeping.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleeping.add(done);
    });

  /** Run one job; what pg-boss should record of it. */
  async function runJob(boss: PgBossLike, job: BossJob<QueuedEvent>): Promise<{ ok: boolean; data: object }> {
    const info = { id: job.id, attempt: job.retryCount + 1, maxAttempts: job.retryLimit + 1, queue: queue.name };
    const verdict = await runner.run(job.data, info);
    if (verdict.action === 'complete') return { ok: true, data: { outcome: verdict.report.outcome } };
    if (verdict.action === 'retry') return { ok: false, data: { message: verdict.error.message } };
    await boss.send(queue.deadLetterName, { ...job.data, error: verdict.error.message, attempts: info.attempt, deadAt: Date.now() });
    return { ok: true, data: { outcome: 'dead-letter' } };
  }

  async function slot(boss: PgBossLike): Promise<void> {
    while (!stopping) {
      let job: BossJob<QueuedEvent> | undefined;
      try {
        [job] = await boss.fetch<QueuedEvent>(queue.name, { batchSize: 1, includeMetadata: true });
      } catch (error) {
        log(`could not fetch a job from ${queue.name}; trying again`, error);
        await pause(Math.max(pollingIntervalMs, 1_000));
        continue;
      }
      if (!job) {
        await pause(pollingIntervalMs);
        continue;
      }
      try {
        const { ok, data } = await runJob(boss, job);
        await (ok ? boss.complete(queue.name, job.id, data) : boss.fail(queue.name, job.id, data));
      } catch (error) {
        // The job stays active until it expires (expireInSeconds), then runs again: its done record makes that run a duplicate.
        log(`could not record the end of job ${job.id}; it runs again once it expires`, error);
      }
    }
  }

  return queueWorker(runner, {
    async start() {
      if (slots.length > 0) return;
      const boss = await queue.ready();
      stopping = false;
      slots = Array.from({ length: concurrency }, () => slot(boss));
    },
    async close() {
      stopping = true;
      for (const done of [...sleeping]) done();
      await Promise.all(slots.splice(0));
    },
  });
}
