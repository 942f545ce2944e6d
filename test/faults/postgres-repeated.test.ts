import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, startReceiver, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { engineView, queueEnv, runNames, WEB, WORKER } from '../queue/helpers.js';
import { until } from '@payhook/test-support/wait';
import { startPostgres } from '@payhook/test-support/servers/postgres-server';
import { serviceLoad, slowAnswers, tally, unacknowledged, withResend, type EventFate } from './service.js';

/**
 * Issue 37: PostgreSQL ends every connection again and again under load — `pg_ctl restart -m fast`
 * (each backend sends FATAL 57P01), `-m immediate` (backends quit on SIGQUIT, the start replays
 * the WAL) and `pg_terminate_backend` of every client backend (57P01, the server staying up) — while
 * about 32 deliveries are in flight (16 events at once, 2 copies each) against two receiver
 * processes, or against a web process handing off to pg-boss and its worker. A connection that
 * breaks while a client is checked out and has no 'error' listener ends the process: one fault
 * rarely lands in that window, forty in one run, on a small pool, nearly always (the old
 * withClient, which listened only after `await pool.connect()`, died in 5 of 5 runs of the first case). The processes must stay up,
 * answer every delivery within 10 s, and every event's effect must be there (exactly once where it
 * commits with the done record).
 */
const SECRET = 'whsec_pg_repeated';
/** The assertion: the service's own timeout is longer, so a slow answer is measured, not cut short. */
const ANSWER_LIMIT_MS = 10_000;
const SERVICE_TIMEOUT_MS = 15_000;
const ANSWERS = ['200 processed', '200 duplicate', '202 accepted', '409 in-progress', '500 failed', '503 store-unavailable', 'network'];

const server = await startPostgres();
/** Whether a child process lived through it, read before it is stopped. */
const alive = (c: ChildReceiver) => c.process.exitCode === null && c.process.signalCode === null;

type Fault = 'fast' | 'immediate' | 'terminate';
/**
 * `n` faults, in turn: terminate, fast, terminate, immediate (40: 20 terminations, 10 of each
 * restart). Terminations come twice as often because they are what reached the unheard-error window
 * in our measurements (pools of 4): the old withClient died in 6 of 6 runs of 30 terminations and
 * in none of 3 runs of 30 fast restarts; about one termination in eight caught it. An immediate stop
 * sends a warning, not a FATAL: the error comes with the socket's end, in a callback of its own,
 * after a waiting holder has listened.
 */
const mixed = (n: number): Fault[] =>
  Array.from({ length: n }, (_, k) => (['terminate', 'fast', 'terminate', 'immediate'] as const)[k % 4]!);

/**
 * Fault k strikes as event (k + 1) × `step` starts, after fault k − 1 has finished (a restart is
 * back up). That one event waits until its fault has struck, so every fault lands during the load
 * however fast the load runs; the other 15 events in flight go on.
 */
function faultPlan(kinds: readonly Fault[], step: number) {
  const done: Fault[] = [];
  let terminated = 0;
  let failure: unknown;
  let chain = Promise.resolve();
  return {
    done,
    terminated: () => terminated,
    onEvent(i: number): Promise<void> | undefined {
      const k = i / step - 1;
      if (!Number.isInteger(k) || k < 0 || k >= kinds.length) return undefined;
      const kind = kinds[k]!;
      let struck!: () => void;
      const hit = new Promise<void>((resolve) => (struck = resolve));
      chain = chain
        .then(async () => {
          if (kind === 'terminate') {
            terminated += await server!.terminateBackends();
            struck();
          } else await server!.restart(struck, kind);
          done.push(kind);
        })
        .catch((error: unknown) => {
          failure ??= error;
          struck();
        });
      return hit;
    },
    async settled() {
      await chain;
      if (failure) throw failure;
    },
  };
}

/**
 * The service's load with the faults, then its resend of every event not acknowledged (all five
 * retries fell on faults), once the last fault is over. The fates merge both passes. Once one of
 * `children` has died the service stops sending: its retries against a dead process would only
 * take minutes to fail the test that the dead process already fails.
 */
async function loadWithFaults(children: readonly ChildReceiver[], run: string, events: number, kinds: readonly Fault[]) {
  const plan = faultPlan(kinds, Math.floor(events / (kinds.length + 1)));
  const ports = children.filter((c) => c.port > 0).map((c) => c.port);
  const halt = () => !children.every(alive);
  const common = { ports, secret: SECRET, run, events, timeoutMs: SERVICE_TIMEOUT_MS, halt };
  const started = performance.now();
  const first = await serviceLoad({ ...common, onEvent: (i) => plan.onEvent(i) });
  await plan.settled();
  const { fates, resent } = await withResend(first, (indices) => serviceLoad({ ...common, indices }), halt);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const maxMs = Math.round(Math.max(...fates.flatMap((f) => f.answerMs)));
  const slow = slowAnswers(fates, ANSWER_LIMIT_MS);
  return { fates, resent, seconds, maxMs, slow, faults: plan.done, terminated: plan.terminated() };
}

const felt = (fates: readonly EventFate[]) => fates.some((f) => f.answers.some((a) => a.startsWith('5') || a === 'network'));

async function effectsOf(run: string): Promise<Map<string, number>> {
  const reader = await effectsTable(server!.url);
  try {
    return await countPg(reader, run);
  } finally {
    await reader.end();
  }
}

describe.skipIf(!server)('PostgreSQL ends every connection, again and again under load', () => {
  beforeAll(async () => {
    expect(server).toBeDefined();
    await (await effectsTable(server!.url)).end();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Two receiver processes on the Postgres store, with `effect` as their handler. */
  async function receivers(run: string, effect: 'pg-transactional' | 'pg-insert', extra: Record<string, string> = {}) {
    const env = {
      CHILD_STORE: 'postgres',
      CHILD_URL: server!.url,
      CHILD_SECRET: SECRET,
      CHILD_RUN: run,
      CHILD_EFFECT: effect,
      CHILD_LEASE_MS: '3000',
      CHILD_BUDGET_MS: '2500',
      ...extra,
    };
    return Promise.all([startReceiver(env), startReceiver(env)]);
  }

  it('transactional() with the ledger, 40 faults (20 terminations, 20 restarts: 10 fast, 10 immediate): both processes stay up, every answer within 10 s, every effect exactly once', async () => {
    const run = randomUUID();
    const EVENTS = 1_640;
    // A pool of 2 for 16 deliveries at a time: every client passes from a finished query straight
    // to a waiting delivery, the moment a termination in the same read used to go unheard (with
    // pg's default pool of 10 the old code died in 1 of 8 runs of 30 to 40 terminations).
    const children = await receivers(run, 'pg-transactional', { CHILD_LEDGER: '1', CHILD_PG_MAX: '2' });
    try {
      const r = await loadWithFaults(children, run, EVENTS, mixed(40));
      const stderr = children.map((c) => c.stderr()).join('\n');
      const lived = children.map(alive);
      const effects = await effectsOf(run);
      console.info(
        `[faults:pg-repeated] transactional+ledger: ${EVENTS} events, faults ${r.faults.join(',')} (${r.terminated} backends terminated), ${r.resent} resent, ${r.seconds} s, slowest answer ${r.maxMs} ms`,
        tally(r.fates),
      );
      // The bug of issue 37: a process ended by an 'error' nobody listened to (its stderr says where).
      expect(lived, stderr).toEqual([true, true]);
      expect(r.faults).toHaveLength(40);
      expect(r.slow).toEqual([]);
      expect(unacknowledged(r.fates)).toEqual([]);
      expect([...effects.values()].filter((n) => n !== 1)).toEqual([]);
      expect(effects.size).toBe(EVENTS);
      expect(felt(r.fates)).toBe(true);
      for (const answer of Object.keys(tally(r.fates))) expect(ANSWERS).toContain(answer);
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  }, 150_000);

  it('a plain handler, 10 faults: both processes stay up, every answer within 10 s, every acknowledged event has its effect at least once', async () => {
    const run = randomUUID();
    const EVENTS = 220;
    const children = await receivers(run, 'pg-insert');
    try {
      const r = await loadWithFaults(children, run, EVENTS, mixed(10));
      const stderr = children.map((c) => c.stderr()).join('\n');
      const lived = children.map(alive);
      const effects = await effectsOf(run);
      const reruns = [...effects.values()].filter((n) => n > 1).length;
      console.info(
        `[faults:pg-repeated] plain: ${EVENTS} events, faults ${r.faults.join(',')}, ${r.resent} resent, ${reruns} ran twice, ${r.seconds} s, slowest answer ${r.maxMs} ms`,
        tally(r.fates),
      );
      expect(lived, stderr).toEqual([true, true]);
      expect(r.faults).toHaveLength(10);
      expect(r.slow).toEqual([]);
      expect(unacknowledged(r.fates)).toEqual([]);
      for (const f of r.fates) expect(effects.get(f.reference) ?? 0, f.reference).toBeGreaterThanOrEqual(1);
      expect(felt(r.fates)).toBe(true);
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  }, 120_000);

  it('pg-boss handoff, 10 faults: the web process and the worker stay up, every answer within 10 s, every transactional effect exactly once once the worker drained', async () => {
    const names = runNames('pgrep', 'pg-boss');
    const EVENTS = 200;
    const env = {
      ...queueEnv('pg-boss', { queue: names.queue, table: names.table, pgUrl: server!.url }),
      CHILD_SECRET: SECRET,
      CHILD_LEASE_MS: '3000',
      CHILD_BUDGET_MS: '2500',
    };
    // The worker's claim lease is short, as in test/queue: a claim a fault left behind lapses soon and the job's retry takes it over.
    const [web, worker] = await Promise.all([
      startChild(WEB, env),
      startChild(WORKER, { ...env, CHILD_RUN: names.run, CHILD_EFFECT: 'transactional', CHILD_LEASE_MS: '1500' }),
    ]);
    const pool = new pg.Pool({ connectionString: server!.url, max: 2 });
    pool.on('error', () => {});
    try {
      const r = await loadWithFaults([web, worker], names.run, EVENTS, mixed(10));
      const view = engineView('pg-boss', names.queue, () => pool);
      const references = r.fates.map((f) => f.reference);
      // The worker drains on pg-boss's retry schedule: poll, bounded (a timeout fails below, after the processes are looked at).
      const drained = await until(
        // A dead process fails the test below: no need to wait for a drain that cannot come.
        async () => ![web, worker].every(alive) || ((await countPg(pool, names.run)).size === EVENTS && (await view.unfinished()) === 0),
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          what: async () =>
            `the drain: effects ${(await countPg(pool, names.run)).size}/${EVENTS}, jobs ${JSON.stringify(await view.states())}\n${worker.stderr()}`,
        },
      ).then(
        () => 'drained',
        (e: Error) => e.message,
      );
      const lived = [web, worker].map(alive);
      const effects = await countPg(pool, names.run);
      console.info(
        `[faults:pg-repeated] pg-boss: ${EVENTS} events, faults ${r.faults.join(',')}, ${r.resent} resent, ${r.seconds} s, slowest answer ${r.maxMs} ms, jobs ${JSON.stringify(await view.states())}, dead letters ${await view.deadLetters()}`,
        tally(r.fates),
      );
      expect(lived, `web:\n${web.stderr()}\nworker:\n${worker.stderr()}`).toEqual([true, true]);
      expect(r.faults).toHaveLength(10);
      expect(r.slow).toEqual([]);
      expect(unacknowledged(r.fates)).toEqual([]);
      expect(drained).toBe('drained');
      expect(references.filter((ref) => effects.get(ref) !== 1).map((ref) => `${ref}: ${effects.get(ref) ?? 0}`)).toEqual([]);
      expect(await view.deadLetters()).toBe(0);
      expect(felt(r.fates)).toBe(true);
    } finally {
      await Promise.all([web.stop(), worker.stop()]);
      await pool.end();
    }
  }, 150_000);
});
