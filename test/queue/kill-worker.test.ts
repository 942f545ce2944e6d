import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { queuedKey } from '@payhook/core/queue';
import { postgresStore, type PostgresStore } from '@payhook/store-postgres';
import { createEvent, signedBody } from '@payhook/testing';
import { post, startChild, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { ENGINES, engineView, onLines, queueEnv, runNames, WEB, WORKER, type EngineView } from './helpers.js';
import { sleep, until } from '@payhook/test-support/wait';

const SECRET = 'whsec_kill_worker';
const EVENTS = 300;
const KILLS = 100;
const WORKERS = 4;
const LEASE_MS = 1_500;
/** How long a kill waits for a handler to start on its worker before it kills the worker anyway. */
const POINT_WAIT_MS = 3_000;

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

interface Worker {
  child: ChildReceiver;
  pid: number;
  /** The references this process announced a handler for (`POINT mid-handler <reference>`). */
  announced: Set<string>;
  /** Called at the next start of a handler of an event that had not started before. */
  onPoint?: () => void;
}

/**
 * Four worker processes on one queue, every handler a transactional effect of 20 to 200 ms. Each
 * worker's slot kills its worker with -9 right after a handler started on it (plus 0 to 150 ms)
 * and starts a replacement, 100 kills in all, while a web process queues 300 events
 * (fed as the kills go, so that handlers are running throughout). In the end every event's effect
 * committed exactly once, with its done record, and no job was lost or dead-lettered: the engine
 * brought back each killed worker's jobs, and the store's claim (kept alive while a handler runs,
 * lapsing once its process is gone) let exactly one run commit.
 *
 * A kill follows the first start of an event's handler, so that the kills spread over the events:
 * pg-boss retries a killed worker's job (failed by expireInSeconds) after a backoff that doubles
 * at each retry from a whole second, and an event killed again and again would wait minutes.
 */
describe.each(ENGINES)('kill -9 of %s workers mid-handler', (engine) => {
  const available = Boolean(pgUrl && (engine === 'pg-boss' || redisUrl));
  const names = runNames('kw', engine);
  const env = {
    ...queueEnv(engine, { queue: names.queue, table: names.table, pgUrl: pgUrl ?? '', redisUrl }),
    CHILD_SECRET: SECRET,
  };
  const workerEnv = {
    ...env,
    CHILD_RUN: names.run,
    CHILD_EFFECT: 'transactional',
    CHILD_HANDLER_MS: '20-200',
    CHILD_POINT: '1',
    CHILD_CONCURRENCY: '4',
    CHILD_LEASE_MS: String(LEASE_MS),
    CHILD_STALL_MS: '1000',
  };
  const children = new Set<ChildReceiver>();
  const workers: Worker[] = [];
  /** The events whose handler started somewhere. */
  const started = new Set<string>();
  let web: ChildReceiver;
  /** The kill loop, which afterAll lets end before it kills what is left. */
  let killing: Promise<unknown> = Promise.resolve();
  let stopKilling = false;
  let pool: pg.Pool;
  let store: PostgresStore;
  let view: EngineView;

  async function spawnWorker(): Promise<Worker> {
    const child = await startChild(WORKER, workerEnv);
    children.add(child);
    const w: Worker = { child, pid: child.process.pid!, announced: new Set() };
    onLines(child, (line) => {
      const m = /^POINT mid-handler (\S+)$/.exec(line);
      if (!m) return;
      w.announced.add(m[1]!);
      if (started.has(m[1]!)) return;
      started.add(m[1]!);
      const onPoint = w.onPoint;
      w.onPoint = undefined;
      onPoint?.();
    });
    workers.push(w);
    return w;
  }

  beforeAll(async () => {
    if (!available) return;
    await (await effectsTable(pgUrl!)).end();
    // Connections made now and kept: the children open many, and a full server must not fail the test's own reads.
    pool = new pg.Pool({ connectionString: pgUrl!, max: 3, idleTimeoutMillis: 0 });
    const warm = await Promise.all([1, 2, 3].map(() => pool.connect()));
    for (const c of warm) c.release();
    store = postgresStore({ pool, table: names.table });
    await store.createTable();
    view = engineView(engine, names.queue, () => pool, redisUrl);
    // One worker first, so that pg-boss's queues exist before the others start; then the rest at once.
    await spawnWorker();
    const [first] = await Promise.all([startChild(WEB, env), ...Array.from({ length: WORKERS - 1 }, spawnWorker)]);
    web = first;
    children.add(web);
  }, 60_000);

  afterAll(async () => {
    stopKilling = true;
    await killing;
    await Promise.all([...children].map((c) => c.kill9()));
    if (!available) return;
    await view?.cleanup();
    await pool?.query(`drop table if exists ${names.table}`).catch(() => {});
    await store?.close();
    await pool?.end();
  });

  it.skipIf(!available)(
    `runs each of ${EVENTS} events' transactional effect exactly once through ${KILLS} kills`,
    async () => {
      const t0 = performance.now();
      const events = Array.from({ length: EVENTS }, (_, i) => {
        const event = createEvent('payment.success', { reference: `${names.run}_${i}` });
        const body = JSON.stringify(event);
        return {
          reference: event.reference,
          key: `${event.mode}:${event.reference}:${event.event}`,
          body,
          headers: signedBody(body, { secret: SECRET }).headers as Record<string, string>,
        };
      });
      const answers: Record<string, number> = {};
      const unacked: string[] = [];
      /** Deliver as the service would: retry anything but a 2xx, a few times. */
      const deliver = async (e: (typeof events)[number]) => {
        for (let attempt = 0; attempt < 10; attempt++) {
          if (attempt > 0) await sleep(250); // real wait: the service's pause between retries to a real server
          const a = await post(web.port, e.body, e.headers).then(
            (r) => `${r.status} ${r.outcome}`,
            () => 'network',
          );
          answers[a] = (answers[a] ?? 0) + 1;
          if (a.startsWith('2')) return;
        }
        unacked.push(e.reference);
      };

      let reserved = 0;
      let posted = 0;
      const kills: { pid: number; afterPoint: boolean }[] = [];
      /** One worker's slot: wait for a handler of its worker to start, kill it a moment later, start the next. */
      const slot = async (first: Worker) => {
        let w = first;
        while (reserved < KILLS && !stopKilling) {
          reserved++;
          const point = new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), POINT_WAIT_MS);
            w.onPoint = () => {
              clearTimeout(timer);
              resolve(true);
            };
          });
          // Feed the queue as the kills go, so that by the last kill every event is queued.
          const batch = events.slice(posted, posted + Math.ceil((EVENTS - posted) / (KILLS - reserved + 1)));
          posted += batch.length;
          await Promise.all(batch.map(deliver));
          const afterPoint = await point;
          await sleep(Math.random() * 150); // real wait: the kill lands somewhere in a real process's handler
          await w.child.kill9();
          kills.push({ pid: w.pid, afterPoint });
          w = await spawnWorker();
        }
      };
      const slots = workers.slice(0, WORKERS).map(slot);
      killing = Promise.allSettled(slots);
      // A slot that fails (a replacement that does not start) stops the others.
      await Promise.all(slots).catch((error: unknown) => {
        stopKilling = true;
        throw error;
      });
      const killedAt = performance.now();
      expect(unacked).toEqual([]);
      expect(posted).toBe(EVENTS);

      // Every event's transactional row, then every job finished: real conditions, bounded.
      const counted = () => countPg(pool, names.run);
      await until(
        async () => {
          const c = await counted();
          return events.every((e) => c.has(e.reference));
        },
        {
          timeoutMs: 150_000,
          intervalMs: 200,
          what: async () => {
            const c = await counted();
            return `${events.filter((e) => c.has(e.reference)).length} of ${EVENTS} events' effects; jobs ${JSON.stringify(await view.states())}; dead letters ${await view.deadLetters()}\n${[
              ...children,
            ]
              .map((c) => c.stderr())
              .join('')
              .slice(-3000)}`;
          },
        },
      );
      const effectsAt = performance.now();
      await until(async () => (await view.unfinished()) === 0, {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: async () => `jobs ${JSON.stringify(await view.states())}`,
      });
      const drainedAt = performance.now();

      // Exactly once: one row per event, no more, even after every job finished.
      const effects = await counted();
      const notOnce = events.filter((e) => effects.get(e.reference) !== 1).map((e) => `${e.reference}: ${effects.get(e.reference) ?? 0}`);
      expect(notOnce).toEqual([]);
      const { rows } = await pool.query<{ key: string; attempt: number; pid: number }>(
        'select key, attempt, pid from payhook_test_effects where run = $1',
        [names.run],
      );
      expect(rows.length).toBe(EVENTS);

      // Done in the store, under the event's key (the worker's) and the queued key (the web process's).
      const records = await Promise.all(
        events.map(async (e) => ({ e, done: await store.get(e.key), queued: await store.get(queuedKey(e.key)) })),
      );
      const notDone = records.filter((r) => r.done?.state !== 'done' || r.done.outcome !== 'ok' || r.queued?.state !== 'done');
      expect(notDone.map((r) => `${r.e.key}: ${JSON.stringify(r.done)} / ${JSON.stringify(r.queued)}`)).toEqual([]);

      // The engine: each event one job, every job completed, nothing dead-lettered.
      const states = await view.states();
      expect(states.completed).toBe(EVENTS);
      expect(states.failed ?? 0).toBe(0);
      expect(await view.deadLetters()).toBe(0);
      expect(kills.length).toBe(KILLS);

      // Kills that landed while a handler ran: the killed process had announced a handler whose
      // effect it never committed (each effect row records the pid that committed it).
      const committedBy = new Set(rows.map((r) => `${r.pid} ${r.key}`));
      const announced = new Map(workers.map((w) => [w.pid, w.announced]));
      let midHandler = 0;
      let cut = 0;
      for (const { pid } of kills) {
        const running = [...announced.get(pid)!].filter((ref) => !committedBy.has(`${pid} ${ref}`)).length;
        cut += running;
        if (running > 0) midHandler++;
      }
      // Each cut run held a claim that lapsed and was taken over: a claim attempt past the first.
      const takenOver = records.reduce((n, r) => n + (r.done?.state === 'done' ? r.done.attempt - 1 : 0), 0);
      const onRetry = rows.filter((r) => r.attempt > 1).length;
      const s = (from: number, to: number) => `${((to - from) / 1000).toFixed(1)} s`;
      console.log(
        `[kill-worker ${engine}] kills ${kills.length} (${kills.filter((k) => k.afterPoint).length} right after an event's first handler start), ` +
          `kills mid-handler ${midHandler}, handler runs cut ${cut}, claims taken over ${takenOver}, ` +
          `effects committed on an engine retry (job attempt > 1) ${onRetry}; answers ${JSON.stringify(answers)}; jobs ${JSON.stringify(states)}; ` +
          `kill loop ${s(t0, killedAt)}, last effect +${s(killedAt, effectsAt)}, jobs finished +${s(effectsAt, drainedAt)}, total ${s(t0, drainedAt)}`,
      );
      expect(takenOver).toBeGreaterThanOrEqual(cut);
      // The point of the test: most kills cut a running handler (each comes 0-150 ms after a 20-200 ms handler starts).
      expect(midHandler).toBeGreaterThanOrEqual(KILLS / 2);
    },
    300_000,
  );
});
