/**
 * `@payhook/core/queue`: what the queue packages build on: the job a receiver's handoff writes and
 * the runner a worker wraps.
 *
 * @module
 */
export { queuedKey } from './routing/handoff.js';
export type { JobInfo } from './contracts/delivery.js';
export type { Handoff, QueuedEvent } from './contracts/handling.js';
export { createJobRunner, queueWorker, type JobRunner, type JobVerdict, type QueueWorker } from './running/job-runner.js';
export type { RunOptions } from './settings/options.js';
