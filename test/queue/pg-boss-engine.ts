// The pg-boss engine of the queue contract (contract.ts), in a schema of the run's own: pg-boss
// migrates the schema it starts on to its own version, so two versions (the matrix's two ends, or
// the workspace's and the Node 24 run's) must never share one. Imports only published entries.
import { randomUUID } from 'node:crypto';
import { createWorker, pgBossQueue } from '@payhook/queue-pg-boss';
import type { ContractEngine } from './contract.js';

const quiet = { info() {}, warn() {}, error() {} };

export function pgBossEngine(databaseUrl: string): ContractEngine & { schema: string } {
  const schema = `qconf_boss_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return {
    schema,
    queue(s) {
      const queue = pgBossQueue({ ...s, connectionString: databaseUrl, bossOptions: { max: 4, schema } });
      const rows = async (name: string, key: string | null) => {
        const { rows } = await s.store.pool.query<{ key: string; error: string | null }>(
          `select data->>'dedupeKey' as key, data->>'error' as error from ${schema}.job where name = $1 and ($2::text is null or data->>'dedupeKey' = $2)`,
          [name, key],
        );
        return rows;
      };
      return {
        enqueue: queue.enqueue,
        jobsFor: async (key) => (await rows(queue.name, key)).length,
        deadLetters: async () => (await rows(queue.deadLetterName, null)).map((r) => ({ dedupeKey: r.key, error: r.error ?? undefined })),
        jobData: async (key) =>
          (
            await s.store.pool.query<{ data: unknown }>(`select data from ${schema}.job where name = $1 and data->>'dedupeKey' = $2`, [
              queue.name,
              key,
            ])
          ).rows[0]?.data,
        async send(data) {
          await queue.ready();
          await queue.boss.send(queue.name, data);
        },
        worker: (o) => createWorker({ ...o, queue, logger: quiet }),
        close: () => queue.close(),
      };
    },
    async dispose(store) {
      await store.pool.query(`drop schema if exists ${schema} cascade`);
    },
  };
}
