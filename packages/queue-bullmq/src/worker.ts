import { createJobRunner, queueWorker, type QueueWorker, type QueuedEvent, type RunOptions } from '@payhook/core/queue';
import { UnrecoverableError, Worker, type Job, type WorkerOptions as BullWorkerOptions } from 'bullmq';
import { NAME, withNetworkDefaults, type PayhookBullmqQueue } from './queue.js';

/** The run options of a receiver but `dedupeKey`: a worker claims the key the web process computed, carried in the job. */
export interface WorkerOptions extends Omit<RunOptions, 'dedupeKey'> {
  /** The queue whose jobs this worker runs. */
  queue: PayhookBullmqQueue;
  /** Jobs this process runs at once. Default 4. */
  concurrency?: number;
  /** BullMQ's own worker settings (lockDuration, stalledInterval, maxStalledCount …), passed through. */
  bullmq?: Partial<Omit<BullWorkerOptions, 'connection' | 'concurrency' | 'autorun' | 'prefix'>>;
}

export interface PayhookWorker extends QueueWorker {
  /** The BullMQ worker, once started. */
  readonly worker: Worker<QueuedEvent> | undefined;
}

/**
 * Consume a payhook queue on BullMQ: each job runs the typed handlers once, through the store,
 * with the same `ctx` a receiver gives plus `ctx.job`. A handler that throws is retried with the
 * queue's backoff; NonRetriableError, or a failure on the last attempt, moves the job to the
 * dead-letter queue. Run as many worker processes as you like.
 *
 * @example
 * const worker = createWorker({ queue, store, concurrency: 8 })
 *   .on('payment.success', store.transactional(async (event, ctx, client) => {
 *     await client.query('update orders set paid = true where id = $1', [event.merchantReference]);
 *   }));
 * await worker.start();
 */
export function createWorker(options: WorkerOptions): PayhookWorker {
  const { queue, concurrency = 4, bullmq, ...runOptions } = options;
  if (!queue || typeof queue.enqueue !== 'function' || !queue.deadLetters)
    throw new TypeError(`${NAME} createWorker needs the queue: createWorker({ queue: bullmqQueue({ connection }), store }).`);
  if (!(Number.isInteger(concurrency) && concurrency >= 1))
    throw new RangeError(`${NAME} concurrency must be a whole number from 1; got ${concurrency}.`);
  const runner = createJobRunner(runOptions);
  let bull: Worker<QueuedEvent> | undefined;

  async function processJob(job: Job<QueuedEvent>) {
    const info = { id: job.id ?? '?', attempt: job.attemptsMade + 1, maxAttempts: job.opts.attempts ?? 1, queue: queue.name };
    const verdict = await runner.run(job.data, info);
    if (verdict.action === 'complete') return verdict.report.outcome;
    if (verdict.action === 'retry') throw verdict.error;
    const dead = { ...(job.data as QueuedEvent), error: verdict.error.message, attempts: info.attempt, deadAt: Date.now() };
    await queue.deadLetters.add(job.name, dead, { jobId: job.id });
    // Failed in BullMQ's own records too, without a further attempt.
    throw new UnrecoverableError(`${NAME} moved to ${queue.deadLetters.name}: ${verdict.error.message}`);
  }

  return queueWorker(
    runner,
    {
      async start() {
        if (bull) return;
        const { prefix } = queue.options;
        // A worker's blocking wait for jobs lasts up to BullMQ's 10 s (or drainDelay): its socket timeout is longer.
        const connection = withNetworkDefaults(queue.options.connection, Math.max(10, bullmq?.drainDelay ?? 0) * 1_000 + 5_000);
        bull = new Worker<QueuedEvent>(queue.name, processJob, {
          maxStalledCount: 5,
          ...bullmq,
          connection,
          prefix,
          concurrency,
          autorun: false,
        });
        // Unheard, an 'error' would end the process; ioredis reconnects by itself. A job's own error is reported by the runner.
        bull.on('error', (error) => runner.logError(`${NAME} the BullMQ worker of ${queue.name} reported an error; it goes on`, error));
        void bull.run();
        await bull.waitUntilReady();
      },
      async close() {
        await bull?.close();
      },
    },
    {
      get worker() {
        return bull;
      },
    },
  );
}
