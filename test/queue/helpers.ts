import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { Redis } from 'ioredis';
import { bullmqQueue, jobIdOf, type PayhookBullmqQueue } from '@payhook/queue-bullmq';
import type { ChildReceiver } from '@payhook/test-support/children';

/** The queue children of test/queue/children. */
export const WEB = fileURLToPath(new URL('./children/web.ts', import.meta.url));
export const WORKER = fileURLToPath(new URL('./children/worker.ts', import.meta.url));

export const ENGINES = ['bullmq', 'pg-boss'] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * Names unique to one run of one engine: the queue (letters, digits and `-` suit both BullMQ and
 * pg-boss), the store's table, and the run id the worker records effects under.
 */
export function runNames(prefix: string, engine: Engine) {
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const tag = engine === 'bullmq' ? 'bull' : 'boss';
  return { run: `${prefix}-${tag}-${id}`, queue: `${prefix}-${tag}-${id}`, table: `${prefix.replaceAll('-', '_')}_${tag}_${id}` };
}

/** The env every queue child of one run shares (see children/queue.ts). */
export function queueEnv(engine: Engine, o: { queue: string; table: string; pgUrl: string; redisUrl?: string }): Record<string, string> {
  return {
    QUEUE_ENGINE: engine,
    QUEUE_NAME: o.queue,
    QUEUE_ATTEMPTS: '20',
    QUEUE_BACKOFF_MS: '200',
    QUEUE_EXPIRE_S: '2',
    QUEUE_MAINTENANCE_S: '1',
    CHILD_URL: o.pgUrl,
    CHILD_TABLE: o.table,
    ...(o.redisUrl ? { CHILD_REDIS: o.redisUrl } : {}),
  };
}

/** Call `onLine` with each whole line the child prints from now on (startChild's own parser only knows one-word points). */
export function onLines(child: ChildReceiver, onLine: (line: string) => void): void {
  let buffered = '';
  child.process.stdout!.on('data', (d: string | Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, nl).trim());
      buffered = buffered.slice(nl + 1);
    }
  });
}

/** What a test asks of the engine's own records, the same for BullMQ and pg-boss. */
export interface EngineView {
  /** Jobs the engine holds for a dedupe key, in any state. */
  jobsFor(dedupeKey: string): Promise<number>;
  /** Jobs of the queue by state (the engine's own state names). */
  states(): Promise<Record<string, number>>;
  /** Jobs not yet finished (waiting, active, delayed, retry …). */
  unfinished(): Promise<number>;
  /** Jobs in the dead-letter queue. */
  deadLetters(): Promise<number>;
  /** BullMQ: the `added` and `duplicated` events of a job id (a second enqueue of one event is `duplicated`). pg-boss: undefined. */
  addEvents?(dedupeKey: string): Promise<{ added: number; duplicated: number }>;
  /** Remove the queue's jobs and tables, best effort. */
  cleanup(): Promise<void>;
}

/** `db` is asked at each query: a test may hold one connection while it runs and give it back before cleanup. */
export function engineView(engine: Engine, queueName: string, db: () => pg.Pool | pg.PoolClient, redisUrl?: string): EngineView {
  if (engine === 'bullmq') {
    const u = new URL(redisUrl!);
    const queue: PayhookBullmqQueue = bullmqQueue({ name: queueName, connection: { host: u.hostname, port: Number(u.port || 6379) } });
    // No 'paused': BullMQ 6 dropped the state (a paused queue's jobs wait), and nothing here pauses a queue.
    const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;
    return {
      async jobsFor(key) {
        return (await queue.queue.getJob(jobIdOf(key))) ? 1 : 0;
      },
      async states() {
        const counts = await queue.queue.getJobCounts(...STATES);
        return Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
      },
      async unfinished() {
        const c = await queue.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(c).reduce((a, b) => a + b, 0);
      },
      async deadLetters() {
        const c = await queue.deadLetters.getJobCounts(...STATES);
        return Object.values(c).reduce((a, b) => a + b, 0);
      },
      async addEvents(key) {
        // BullMQ's events stream, read with a client of our own (BullMQ 6 no longer types its client as ioredis).
        const reader = new Redis(redisUrl!);
        const id = jobIdOf(key);
        const entries = await reader.xrange(`bull:${queueName}:events`, '-', '+').finally(() => reader.disconnect());
        let added = 0;
        let duplicated = 0;
        for (const [, fields] of entries) {
          const f = Object.fromEntries(fields.flatMap((v, i) => (i % 2 === 0 ? [[v, fields[i + 1]]] : [])));
          if (f.jobId !== id) continue;
          if (f.event === 'added') added++;
          if (f.event === 'duplicated') duplicated++;
        }
        return { added, duplicated };
      },
      async cleanup() {
        await queue.queue.obliterate({ force: true }).catch(() => {});
        await queue.deadLetters.obliterate({ force: true }).catch(() => {});
        await queue.close();
      },
    };
  }
  const count = async (sql: string, values: unknown[]) => (await db().query<{ n: number }>(sql, values)).rows[0]!.n;
  return {
    // pgboss.job is partitioned by queue; completed jobs stay in it until archived (12 h by default), then in pgboss.archive.
    jobsFor: (key) =>
      count(
        `select ((select count(*) from pgboss.job where name = $1 and data->>'dedupeKey' = $2)
               + (select count(*) from pgboss.archive where name = $1 and data->>'dedupeKey' = $2))::int as n`,
        [queueName, key],
      ),
    async states() {
      const { rows } = await db().query<{ state: string; n: number }>(
        'select state::text, count(*)::int as n from pgboss.job where name = $1 group by state',
        [queueName],
      );
      return Object.fromEntries(rows.map((r) => [r.state, r.n]));
    },
    unfinished: () => count(`select count(*)::int as n from pgboss.job where name = $1 and state < 'completed'`, [queueName]),
    deadLetters: () => count('select count(*)::int as n from pgboss.job where name = $1', [`${queueName}-dead-letter`]),
    async cleanup() {
      // The queue's jobs first: its partition's rows reference the queue.
      for (const name of [queueName, `${queueName}-dead-letter`]) {
        await db()
          .query('delete from pgboss.job where name = $1', [name])
          .catch(() => {});
        await db()
          .query('delete from pgboss.archive where name = $1', [name])
          .catch(() => {});
        await db()
          .query('select pgboss.delete_queue($1)', [name])
          .catch(() => {});
      }
    },
  };
}
