// What the queue packages build on: the job a receiver's handoff writes and the runner a worker wraps.
export { queuedKey, type Handoff, type JobInfo, type QueuedEvent } from './handoff.js';
export { createJobRunner, queueWorker, type JobRunner, type JobVerdict, type QueueWorker } from './job-runner.js';
export type { RunOptions } from './options.js';
