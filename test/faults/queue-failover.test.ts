import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startChild, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { engineView, queueEnv, runNames, WEB, WORKER, type Engine, type EngineView } from '../queue/helpers.js';
import { requirePostgres } from '@payhook/test-support/services';
import { until } from '@payhook/test-support/wait';
import { query, standbyBinaries, startPostgresReplicated } from '@payhook/test-support/servers/postgres-standby';
import { startRedisReplicated } from './redis-replicas.js';
import { hasRedisServer } from '@payhook/test-support/servers/redis-server';
import { serviceLoad, tally } from './service.js';

/**
 * "Exactly once across a replica failover", for the queue handoffs: two web processes hand events
 * to the queue and a worker runs each event's effect (transactional: one row per event, committed
 * with the worker's done record) while the queue's server fails over to a replica `LAG_MS` behind,
 * under load (32 events in flight, 2 copies each). Then the service sends every event once more,
 * and the worker drains.
 *
 * - BullMQ with `waitForReplicas: { count: 1 }`: the queue on a Redis primary whose replica runs
 *   behind (the primary SIGKILLed, its unsent stream lost, the replica promoted and the children's
 *   address moved to it); the store and the effects stay on the shared Postgres.
 * - pg-boss: store, jobs and effects on a Postgres primary with a synchronous standby behind the
 *   slow link (SIGKILLed, standby promoted, address moved); effects counted on the promoted one.
 *   The store runs `listen: false`, the setting beside a synchronous standby: NOTIFY's lock, held
 *   from a commit's start until the standby's answer, would make every ending commit take its turn.
 *
 * Counted: events whose effect ran more than once, and events acknowledged (2xx) by the first load
 * whose effect is missing once the worker has drained (acknowledged, then lost); for pg-boss also
 * those with neither job nor effect on the standby when promoted (the resend would hide them).
 */
const SECRET = 'whsec_queue_failover';
const EVENTS = 240;
const LAG_MS = 250;
const LOG = '[faults:queue-failover]';
/** How long the worker gets, after the resend, to run every acknowledged event. */
const DRAIN_MS = 20_000;

const shared = await requirePostgres();
const redisInstalled = hasRedisServer();
const bin = standbyBinaries();

/** The engine's side of one case: where the children's queue and store are, and the failover. */
interface Cluster {
  env: Record<string, string>;
  /** The primary is killed as this event's deliveries start. */
  failAt: number;
  /** The worker's own env. */
  worker: Record<string, string>;
  /** Where the effects are counted once the failover is over. */
  effectsUrl: string;
  view(queue: string, db: () => pg.Pool): EngineView;
  /**
   * Resolves with the failover's steps and their times, when the children's address moved
   * (`performance.now()`), and (pg-boss) the references the promoted server held a job or an effect
   * for before any child could reach it.
   */
  failover(run: string, queue: string): Promise<{ timeline: string; switchedAt: number; kept?: Set<string> }>;
  stop(): Promise<void>;
}

async function bullmqCluster(): Promise<Cluster> {
  await (await effectsTable(shared!)).end();
  const redis = await startRedisReplicated({ lagMs: LAG_MS });
  return {
    // The documented configuration: a job answered 202 is on the replica.
    env: { CHILD_URL: shared!, CHILD_REDIS: redis.url, QUEUE_REDIS_WAIT: '1' },
    failAt: EVENTS / 2,
    // A worker a little slower than the web processes (whose WAITs take turns on the queue's
    // connection: about 15 enqueues a second here): it has a backlog of jobs when the primary dies.
    worker: { CHILD_CONCURRENCY: '2', CHILD_HANDLER_MS: '100-200' },
    effectsUrl: shared!,
    view: (queue, db) => engineView('bullmq', queue, db, redis.url),
    async failover() {
      await redis.failover();
      const switchedAt = performance.now();
      return { timeline: redis.timeline(), switchedAt };
    },
    stop: () => redis.stop(),
  };
}

async function pgBossCluster(): Promise<Cluster> {
  const db = (await startPostgresReplicated({ lagMs: LAG_MS, synchronous: true }))!;
  return {
    env: { CHILD_URL: db.url, CHILD_PG_LISTEN: '0' },
    failAt: EVENTS / 2,
    worker: { CHILD_CONCURRENCY: '8' },
    effectsUrl: db.standbyUrl,
    view: (queue, pool) => engineView('pg-boss', queue, pool),
    async failover(run, queue) {
      let kept: Set<string> | undefined;
      const onPromoted = async () => {
        const { rows } = await query(db.standbyUrl, (c) => c.query<{ ref: string }>(HELD, [queue, run]));
        kept = new Set(rows.map((r) => r.ref));
      };
      const t = await db.failover({ onPromoted });
      const timeline = `killed ${t.killed} ms, promoted ${t.promoted} ms, switched ${t.switched} ms`;
      return { timeline, switchedAt: t.at + t.switched, kept };
    },
    stop: () => db.stop(),
  };
}

/** The references a pg-boss queue holds a job for (in any state), or whose effect ran. */
const HELD = `select data->'event'->>'reference' as ref from pgboss.job where name = $1
  union select data->'event'->>'reference' from pgboss.archive where name = $1
  union select key from payhook_test_effects where run = $2`;

const alive = (c: ChildReceiver) => c.process.exitCode === null && c.process.signalCode === null;

async function underFailover(engine: Engine, cluster: Cluster) {
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
  const names = runNames('qfo', engine);
  const env = {
    ...queueEnv(engine, { queue: names.queue, table: names.table, pgUrl: '' }),
    ...cluster.env,
    CHILD_SECRET: SECRET,
    // Longer than the switch: a claim taken before it is not taken over while its holder may still run.
    CHILD_LEASE_MS: '10000',
    CHILD_BUDGET_MS: '8000',
  };
  const children: ChildReceiver[] = [];
  const pool = new pg.Pool({ connectionString: cluster.effectsUrl, max: 2 });
  pool.on('error', () => {});
  const view = cluster.view(names.queue, () => pool);
  try {
    const spawned = await Promise.allSettled([
      startChild(WEB, env),
      startChild(WEB, env),
      startChild(WORKER, {
        ...env,
        CHILD_RUN: names.run,
        CHILD_EFFECT: 'transactional',
        CHILD_LEASE_MS: '3000',
        CHILD_STALL_MS: '2000',
        QUEUE_EXPIRE_S: '10',
        ...cluster.worker,
      }),
    ]);
    children.push(...spawned.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])));
    for (const s of spawned) if (s.status === 'rejected') throw s.reason;
    const [webA, webB] = children as [ChildReceiver, ChildReceiver, ChildReceiver];
    const halt = () => !children.every(alive);
    const load = { ports: [webA.port, webB.port], secret: SECRET, run: names.run, events: EVENTS, inFlight: 32, halt };

    let failover: ReturnType<Cluster['failover']> | undefined;
    let killAt = 0;
    const first = await serviceLoad({
      ...load,
      onEvent: (i) => {
        if (i !== cluster.failAt) return;
        killAt = performance.now();
        failover = cluster.failover(names.run, names.queue);
        failover.catch(() => {}); // awaited below, not an unhandled rejection meanwhile
      },
    });
    if (!failover) throw new Error(`a child died before the failover\n${children.map((c) => digest(c.stderr())).join('\n')}`);
    const { timeline, switchedAt, kept } = await failover;
    // pg-boss: answered 2xx before the switch, yet neither job nor effect on the promoted server (the
    // resend below would queue it again, as it finds no done record either: only this shows it).
    const lostAtSwitch = kept
      ? first.filter((f) => f.acked && f.ackedAt! < switchedAt && !kept.has(f.reference)).map((f) => f.reference)
      : [];
    const loadedIn = seconds();
    // The service sends every event once more.
    const again = await serviceLoad({ ...load, copies: 1 });

    // The drain: every event acknowledged at any time has its effect (bounded: one lost never does).
    const acked = [...new Set([...first, ...again].filter((f) => f.acked).map((f) => f.reference))];
    const drainedAt = performance.now();
    let effects = new Map<string, number>();
    const drained = await until(
      async () => {
        effects = await countPg(pool, names.run);
        return halt() || acked.every((ref) => effects.has(ref));
      },
      { timeoutMs: DRAIN_MS, intervalMs: 250, what: 'the drain' },
    ).then(
      () => !halt(),
      () => false,
    );
    const drainMs = Math.round(performance.now() - drainedAt);
    effects = await countPg(pool, names.run);
    const twice = [...effects].filter(([, n]) => n > 1).map(([ref, n]) => `${ref} ×${n}`);
    // With when it was acknowledged (from the kill) and whether the engine holds its job now, for the failure message.
    const lost = await Promise.all(
      first
        .filter((f) => f.acked && !effects.has(f.reference))
        .map(async (f) => {
          const jobs = await view.jobsFor(`sandbox:${f.reference}:payment.success`).catch(() => '?');
          return `${f.reference}: ${f.answers.join(', ')}, acknowledged ${Math.round(f.ackedAt! - killAt)} ms after the kill, ${jobs} job(s) now`;
        }),
    );
    const unacked = first.filter((f, i) => !f.acked && !again[i]?.acked).length;
    const states = await view.states().catch((e: Error) => ({ error: e.message }));
    console.info(
      `${LOG} ${engine}: ${EVENTS} events, ${twice.length} ran twice, ${lost.length} acknowledged then lost` +
        `${kept ? ` (${lostAtSwitch.length} missing on the promoted server at the switch)` : ''}, ` +
        `${effects.size} effects, ${unacked} never acknowledged; failover at event ${cluster.failAt}, load ${loadedIn} s, ` +
        `drain ${drained ? `${drainMs} ms` : `not done in ${DRAIN_MS} ms`}, ${seconds()} s in all; ` +
        `failover: ${timeline}; jobs ${JSON.stringify(states)}`,
      tally(first),
      tally(again),
    );
    const log = children.map((c, i) => `--- ${i < 2 ? 'web' : 'worker'} ---\n${digest(c.stderr())}`).join('\n');
    return { first, again, drained, twice, lost, lostAtSwitch, alive: children.map(alive), log };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await view.cleanup().catch(() => {});
    if (engine === 'bullmq') await pool.query(`drop table if exists ${names.table}`).catch(() => {});
    await pool.end();
    await cluster.stop();
  }
}

/** A child's stderr for a failure message: each kind of line once, with how often. */
function digest(stderr: string): string {
  const kinds = new Map<string, number>();
  for (const line of stderr.split('\n').filter(Boolean)) kinds.set(line.slice(0, 300), (kinds.get(line.slice(0, 300)) ?? 0) + 1);
  return [...kinds].map(([kind, n]) => `${n} × ${kind}`).join('\n');
}

function expectExactlyOnce(r: Awaited<ReturnType<typeof underFailover>>) {
  expect(r.alive, r.log).toEqual([true, true, true]);
  expect(r.twice, r.log).toEqual([]);
  expect(r.lost, r.log).toEqual([]);
  expect(r.lostAtSwitch, r.log).toEqual([]);
  expect(r.drained, r.log).toBe(true);
}

describe.skipIf(!shared)('a queue handoff whose engine fails over to a replica 250 ms behind, under load', () => {
  it.skipIf(!redisInstalled)(
    'BullMQ, waitForReplicas 1: nothing runs twice, nothing acknowledged is lost',
    async () => {
      expectExactlyOnce(await underFailover('bullmq', await bullmqCluster()));
    },
    90_000,
  );

  it.skipIf(!bin)(
    'pg-boss, synchronous standby: nothing runs twice, nothing acknowledged is lost',
    async () => {
      expectExactlyOnce(await underFailover('pg-boss', await pgBossCluster()));
    },
    90_000,
  );
});
