import { bullmqQueue, createWorker as bullmqWorker, jobIdOf, type PayhookBullmqQueue } from '@payhook/queue-bullmq';
import type { QueuedEvent } from '@payhook/core/queue';
import { DATABASE_URL, REDIS_URL } from '@payhook/test-support/services';
import type { ContractEngine } from './contract.js';
import { pgBossEngine } from './pg-boss-engine.js';

const quiet = { info() {}, warn() {}, error() {} };

/** The engines the workspace runs the queue contract on (contract.ts). */
export const ENGINES = {
  bullmq: (): ContractEngine => ({
    queue(s) {
      const u = new URL(REDIS_URL);
      const queue: PayhookBullmqQueue = bullmqQueue({ ...s, connection: { host: u.hostname, port: Number(u.port || 6379) } });
      return {
        enqueue: queue.enqueue,
        async jobsFor(key) {
          return (await queue.queue.getJob(jobIdOf(key))) ? 1 : 0;
        },
        async deadLetters() {
          const jobs = await queue.deadLetters.getJobs(['waiting', 'delayed', 'completed', 'failed', 'active']);
          return jobs.map((j) => ({ dedupeKey: j.data.dedupeKey, error: j.data.error }));
        },
        async jobData(key) {
          return (await queue.queue.getJob(jobIdOf(key)))?.data;
        },
        async send(data) {
          await queue.queue.add('forged', data as unknown as QueuedEvent, { jobId: jobIdOf(data.dedupeKey), attempts: 1 });
        },
        worker: (o) => bullmqWorker({ ...o, queue, logger: quiet }),
        close: () => queue.close(),
      };
    },
  }),
  'pg-boss': () => pgBossEngine(DATABASE_URL),
} satisfies Record<string, () => ContractEngine>;

export type EngineName = keyof typeof ENGINES;
