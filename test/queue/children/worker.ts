/**
 * A worker process on the queue (see queue.ts for the queue's env), run by Node (startChild). Also:
 *
 *   CHILD_RUN          the test run's id: effects are recorded under it in payhook_test_effects
 *   CHILD_EFFECT       transactional: one row per event, committed with the done record
 *                      plain: one row per run of the handler (at least once)
 *                      both: a plain row (key `plain:<reference>`), then the transactional one
 *   CHILD_HANDLER_MS   how long the handler takes: `n` or `min-max` (random in the range)
 *   CHILD_CONCURRENCY  jobs at once (default 4)
 *   CHILD_LEASE_MS     the worker's claim lease (default 30000)
 *   CHILD_STALL_MS     BullMQ: lockDuration and stalledInterval, so a killed worker's job comes back soon
 *   CHILD_POINT        1: print `POINT mid-handler <reference>` as each handler starts
 *
 * Prints `READY 0` once it takes jobs.
 */
import { createWorker as bullmqWorker } from '@payhook/queue-bullmq';
import { createWorker as pgBossWorker, type PayhookPgBossQueue } from '@payhook/queue-pg-boss';
import type { PayhookBullmqQueue } from '@payhook/queue-bullmq';
import type { DeliveryReport, EventHandler } from '@payhook/core';
import pg from 'pg';
import { engine, env, queue, store, url } from './queue.js';
import { sleep } from '@payhook/test-support/wait';

const run = env('CHILD_RUN');
const effect = env('CHILD_EFFECT', 'transactional');
const [lo, hi] = env('CHILD_HANDLER_MS', '0').split('-').map(Number) as [number, number?];
const handlerMs = () => (hi === undefined ? lo : lo + Math.random() * (hi - lo));
const announce = process.env.CHILD_POINT === '1';
const insert = 'insert into payhook_test_effects (run, key, attempt, pid) values ($1, $2, $3, $4)';
const effects = new pg.Pool({ connectionString: url, max: 2 });
effects.on('error', (error) => console.error(`[worker child] effects pool: ${error.message}`));

const transactional = store.transactional(async (event, ctx, client) => {
  await client.query(insert, [run, event.reference, ctx.job?.attempt ?? 0, process.pid]);
});
const handler: EventHandler = async (event, ctx) => {
  if (announce) process.stdout.write(`POINT mid-handler ${event.reference}\n`);
  const ms = handlerMs();
  if (ms > 0) await sleep(ms);
  if (effect !== 'transactional')
    await effects.query(insert, [
      run,
      effect === 'both' ? `plain:${event.reference}` : event.reference,
      ctx.job?.attempt ?? 0,
      process.pid,
    ]);
  if (effect !== 'plain') await transactional(event, ctx);
};

const common = {
  store,
  concurrency: Number(env('CHILD_CONCURRENCY', '4')),
  leaseMs: Number(env('CHILD_LEASE_MS', '30000')),
  logger: {
    warn() {},
    error: (fields: DeliveryReport & { err?: unknown }, message: string) =>
      console.error(message, fields.outcome, fields.dedupeKey, String(fields.err)),
  },
};
const stallMs = process.env.CHILD_STALL_MS ? Number(process.env.CHILD_STALL_MS) : undefined;
const worker =
  engine === 'bullmq'
    ? bullmqWorker({
        ...common,
        queue: queue as PayhookBullmqQueue,
        bullmq: stallMs ? { lockDuration: stallMs, stalledInterval: stallMs, maxStalledCount: 100 } : undefined,
      })
    : pgBossWorker({ ...common, queue: queue as PayhookPgBossQueue });
worker.onAny(handler);
await worker.start();
process.stdout.write('READY 0\n');
