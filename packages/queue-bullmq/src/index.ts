/**
 * `@payhook/queue-bullmq`: hand verified, deduplicated webhooks to BullMQ on Redis (`bullmqQueue`) and run
 * them on workers (`createWorker`), exactly once.
 *
 * @module
 */
export { bullmqQueue, jobIdOf, type BullmqQueueOptions, type DeadLetter, type PayhookBullmqQueue } from './queue.js';
export { createWorker, type PayhookWorker, type WorkerOptions } from './worker.js';
