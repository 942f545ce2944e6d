import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { seededRandom } from '@payhook/testing';
import { engineView, WEB, WORKER, type Engine, type EngineView } from './helpers.js';
import { until } from '@payhook/test-support/wait';
import { answerProblems, errorKinds, planLoad, send, tallyAnswers, type LoadPlan } from './load-helpers.js';

const SECRET = 'whsec_queue_load';
const WEBS = 2;
const WORKERS = 4;
const EVENTS = 7_000;
/** 30% of the 10,000 deliveries are copies of an event: a third sent with another delivery of it, to the other web process. */
const COPIES = 3_000;
const CONCURRENT_COPIES = 1_000;
const IN_FLIGHT = 48;
/** Jobs at once per worker process. */
const CONCURRENCY = { bullmq: 8, 'pg-boss': 8 } as const;
/** The service's retry schedule, shortened: a 409 in-progress lasts as long as one enqueue. */
const RETRY_DELAYS_MS = [100, 250, 500, 1_000, 2_000, 4_000];
const DRAIN_TIMEOUT_MS = 120_000;
/**
 * The plan's seed: fixed, so every run sends the same deliveries in the same order and a failure can
 * be run again as it was. PAYHOOK_LOAD_SEED tries another plan; each run prints a fresh one to try.
 */
const SEED = Number(process.env.PAYHOOK_LOAD_SEED ?? 20261125);
if (!Number.isInteger(SEED)) throw new Error(`PAYHOOK_LOAD_SEED must be an integer; got ${process.env.PAYHOOK_LOAD_SEED}.`);
const fresh = Math.floor(Math.random() * 2 ** 31);
console.info(
  `[queue load] seed ${SEED}; to try another plan: PAYHOOK_LOAD_SEED=${fresh} PAYHOOK_REQUIRE_SERVICES=1 npx vitest run test/queue/load.test.ts`,
);

const pgUrl = await requirePostgres();
const redisUrl = await requireRedis();

/** The engine's queue at the end: jobs of the main queue by state, and every job of its dead-letter queue. */
interface QueueEnd {
  jobs: Record<string, number>;
  deadLetters: number;
}
const endOf = async (view: EngineView): Promise<QueueEnd> => ({ jobs: await view.states(), deadLetters: await view.deadLetters() });

const available = (engine: Engine) => pgUrl !== undefined && (engine === 'pg-boss' || redisUrl !== undefined);

describe.each(['bullmq', 'pg-boss'] as const)('the queue under load on %s', (engine) => {
  describe.skipIf(!available(engine))(`${WEBS} web processes and ${WORKERS} workers`, () => {
    const stamp = `${Date.now()}`;
    const name = `qload_${engine.replace('-', '_')}_${stamp}`;
    const table = `qload_${engine.replace('-', '_')}_${stamp}`;
    const run = `qload-${engine}-${randomUUID()}`;
    const children: ChildReceiver[] = [];
    let pool: pg.Pool;
    /** A connection held from the start, so that the test's own queries need no new one while the children hold theirs. */
    let held: pg.PoolClient | undefined;
    const db = () => held ?? pool;
    let queue: EngineView;
    const common = () => ({
      QUEUE_ENGINE: engine,
      QUEUE_NAME: name,
      CHILD_URL: pgUrl!,
      CHILD_TABLE: table,
      CHILD_REDIS: redisUrl ?? '',
      CHILD_SECRET: SECRET,
    });
    const stderr = () =>
      children
        .map(
          (c, i) =>
            `--- child ${i} (pid ${c.process.pid}, exit ${c.process.exitCode ?? c.process.signalCode ?? '-'}):\n${c.stderr().slice(-2_000)}`,
        )
        .join('\n');

    beforeAll(async () => {
      pool = await effectsTable(pgUrl!);
      held = await pool.connect();
      queue = engineView(engine, name, db, redisUrl);
      const worker = () =>
        startChild(WORKER, { ...common(), CHILD_RUN: run, CHILD_EFFECT: 'both', CHILD_CONCURRENCY: String(CONCURRENCY[engine]) });
      // All at once, as a first deploy starts them: every one creates the queues (pg-boss's
      // createQueue deadlocks when processes run it together; the queue package tries again).
      const rest = await Promise.allSettled([
        ...Array.from({ length: WORKERS }, worker),
        ...Array.from({ length: WEBS }, () => startChild(WEB, common())),
      ]);
      for (const r of rest) if (r.status === 'fulfilled') children.push(r.value);
      const failed = rest.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }, 60_000);

    afterAll(async () => {
      await Promise.all(children.map((c) => c.stop()));
      if (!pool) return;
      held?.release();
      held = undefined;
      await queue?.cleanup();
      await pool.query('delete from payhook_test_effects where run = $1', [run]).catch(() => {});
      await pool.query(`drop table if exists ${table}`).catch(() => {});
      await pool.end();
    }, 60_000);

    it(`queues each of ${EVENTS} events once among ${EVENTS + COPIES} deliveries, and runs its transactional effect once`, async () => {
      const ports = children.slice(WORKERS).map((c) => c.port);
      const plan: LoadPlan = planLoad({
        run,
        secret: SECRET,
        events: EVENTS,
        copies: COPIES,
        concurrentCopies: CONCURRENT_COPIES,
        ports: WEBS,
        random: seededRandom(SEED),
      });
      expect(plan.deliveries).toHaveLength(EVENTS + COPIES);
      expect(plan.slots.filter((slot) => slot.length === 2)).toHaveLength(CONCURRENT_COPIES);

      // Events whose transactional row is in: it commits with the event's done record.
      const done = async () =>
        (
          await db().query<{ n: number }>(`select count(*)::int as n from payhook_test_effects where run = $1 and key not like 'plain:%'`, [
            run,
          ])
        ).rows[0]!.n;
      const started = performance.now();
      await send(plan, ports, IN_FLIGHT, RETRY_DELAYS_MS);
      const sentMs = performance.now() - started;
      const doneWhenSent = await done();
      const answers = tallyAnswers(plan.deliveries);
      const log = `[queue load ${engine}] seed ${SEED}`;
      console.log(
        `${log}: ${plan.deliveries.length} deliveries in ${(sentMs / 1000).toFixed(1)} s (${Math.round(plan.deliveries.length / (sentMs / 1000))}/s), answers`,
        answers,
      );

      // Never a 5xx (nor a broken connection); 200 queued once per event, every other copy 200 duplicate.
      expect(
        Object.keys(answers).filter((a) => !/^(200 queued|200 duplicate|409 in-progress)$/.test(a)),
        stderr(),
      ).toEqual([]);
      expect(answerProblems(plan).slice(0, 20), stderr()).toEqual([]);
      expect(answers['200 queued']).toBe(EVENTS);

      // The workers drain the queue: every event's transactional row, which commits with its done record.
      let lastDone = 0;
      await until(
        async () => {
          const dead = children.find((c) => c.process.exitCode !== null || c.process.signalCode !== null);
          if (dead) throw new Error(`a child died under load:\n${stderr()}`);
          lastDone = await done();
          return lastDone >= EVENTS;
        },
        {
          timeoutMs: DRAIN_TIMEOUT_MS,
          intervalMs: 200,
          what: async () =>
            `the drain: ${lastDone} of ${EVENTS} events processed; queue ${JSON.stringify(await endOf(queue))}\n${stderr()}`,
        },
      );
      const drainedMs = performance.now() - started;
      console.log(
        `${log}: all ${EVENTS} processed ${(drainedMs / 1000).toFixed(1)} s after the first delivery (${((drainedMs - sentMs) / 1000).toFixed(1)} s after the last answer, ${doneWhenSent} done by then), ${Math.round(EVENTS / (drainedMs / 1000))} events/s`,
      );

      // Back to the pool, for countPg to find idle.
      held?.release();
      held = undefined;
      const effects = await countPg(pool, run);
      const tx = plan.references.map((ref) => effects.get(ref) ?? 0);
      const plain = plan.references.map((ref) => effects.get(`plain:${ref}`) ?? 0);
      // Exactly once for the transactional effect, at least once for the plain one, and nothing else.
      expect(tx.filter((n) => n !== 1)).toEqual([]);
      expect(plain.filter((n) => n < 1)).toEqual([]);
      expect(effects.size).toBe(2 * EVENTS);

      // The plain duplicates: rows beyond one per event, counted two ways (all rows, and the extra runs of the events that ran more than once).
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as n from payhook_test_effects where run = $1 and key like 'plain:%'`,
        [run],
      );
      const plainDuplicates = rows[0]!.n - EVENTS;
      const rerun = plain.filter((n) => n > 1);
      console.log(
        `${log}: ${plainDuplicates} plain duplicates (${rerun.length} events ran their handler more than once); the children's errors:`,
        errorKinds(children.flatMap((c) => c.stderr().split('\n'))),
      );
      // A plain duplicate is the at-least-once window: a run that failed after its plain row went in,
      // run again. So each extra run follows a failure of that event, which a worker logged; one
      // without would be a handler run twice for nothing (two workers at once, or a done job redone).
      // A worker's error line names the event's dedupe key, mode:reference:event (ref_1 must not count ref_10's).
      const logged = children.slice(0, WORKERS).flatMap((c) => c.stderr().split('\n'));
      const unexplained = plan.references.filter(
        (ref, i) => plain[i]! > 1 && logged.filter((line) => line.includes(`:${ref}:`)).length < plain[i]! - 1,
      );
      expect(unexplained.slice(0, 20), `events whose handler ran again with no failure logged for them\n${stderr()}`).toEqual([]);
      expect(plainDuplicates).toBe(rerun.reduce((a, n) => a + n - 1, 0));

      // The queue ended with one completed job per event and no dead letters.
      // (An engine marks a job completed a moment after its handler's transaction commits.)
      let end: QueueEnd = await endOf(queue);
      await until(async () => (end = await endOf(queue)).jobs.completed === EVENTS, {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: () => `queue ${JSON.stringify(end)}`,
      }).catch(() => {});
      console.log(`${log}: queue at the end`, end);
      expect(end.deadLetters).toBe(0);
      expect(end.jobs).toEqual({ completed: EVENTS });
    }, 300_000);
  });
});
