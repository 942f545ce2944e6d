export { bullmqQueue, jobIdOf, type BullmqQueueOptions, type DeadLetter, type PayhookBullmqQueue } from './queue.js';
export { createWorker, type PayhookWorker, type WorkerOptions } from './worker.js';
