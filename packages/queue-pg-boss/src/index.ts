/**
 * `@payhook/queue-pg-boss`: hand verified, deduplicated webhooks to pg-boss on PostgreSQL (`pgBossQueue`)
 * and run them on workers (`createWorker`), exactly once.
 *
 * @module
 */
export type { BossJob, BossOptions, PgBossLike } from './boss.js';
export { pgBossQueue, type DeadLetter, type PayhookPgBossQueue, type PgBossQueueOptions } from './queue.js';
export { createWorker, type PayhookWorker, type WorkerOptions } from './worker.js';
