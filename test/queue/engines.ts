import type { Handoff, QueueWorker } from '@payhook/core/queue';
import { bullmqQueue, createWorker as bullmqWorker, jobIdOf, type PayhookBullmqQueue } from '@payhook/queue-bullmq';
import { createWorker as pgBossWorker, pgBossQueue, type PayhookPgBossQueue } from '@payhook/queue-pg-boss';
import type { PostgresStore } from '@payhook/store-postgres';
import { DATABASE_URL, REDIS_URL } from '../services.js';

/** What the conformance suite needs of an engine: the same questions asked of BullMQ and pg-boss. */
export interface TestQueue extends Handoff {
  /** Jobs the engine holds for an event's dedupe key, in any state. */
  jobsFor(dedupeKey: string): Promise<number>;
  /** The dead-letter queue's jobs: the event's dedupe key and the error that sent it there. */
  deadLetters(): Promise<{ dedupeKey: string; error: string | undefined }[]>;
  worker(options: { store: PostgresStore; concurrency?: number; leaseMs?: number }): QueueWorker;
  close(): Promise<void>;
}

export interface QueueSettings {
  store: PostgresStore;
  name: string;
  attempts?: number;
  backoffMs?: number;
}

const quiet = { info() {}, warn() {}, error() {} };

export const ENGINES = {
  bullmq(s: QueueSettings): TestQueue {
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
      worker: (o) => bullmqWorker({ ...o, queue, logger: quiet }),
      close: () => queue.close(),
    };
  },
  'pg-boss'(s: QueueSettings): TestQueue {
    const queue: PayhookPgBossQueue = pgBossQueue({ ...s, connectionString: DATABASE_URL, bossOptions: { max: 4 } });
    const rows = async (name: string, key: string | null) => {
      const { rows } = await s.store.pool.query<{ key: string; error: string | null }>(
        `select data->>'dedupeKey' as key, data->>'error' as error from pgboss.job where name = $1 and ($2::text is null or data->>'dedupeKey' = $2)`,
        [name, key],
      );
      return rows;
    };
    return {
      enqueue: queue.enqueue,
      jobsFor: async (key) => (await rows(queue.name, key)).length,
      deadLetters: async () => (await rows(queue.deadLetterName, null)).map((r) => ({ dedupeKey: r.key, error: r.error ?? undefined })),
      worker: (o) => pgBossWorker({ ...o, queue, logger: quiet }),
      close: () => queue.close(),
    };
  },
} satisfies Record<string, (s: QueueSettings) => TestQueue>;

export type EngineName = keyof typeof ENGINES;
