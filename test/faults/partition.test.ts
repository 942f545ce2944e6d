import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, startReceiver, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, countRedis, effectsTable } from '@payhook/test-support/effects';
import { engineView, queueEnv, runNames, WEB, WORKER, type Engine } from '../queue/helpers.js';
import { sleep, until } from '@payhook/test-support/wait';
import { requireRedis } from '@payhook/test-support/services';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';
import { startPostgres } from '@payhook/test-support/servers/postgres-server';
import { hasRedisServer, startRedis } from '@payhook/test-support/servers/redis-server';
import { serviceLoad, slowAnswers, tally, unacknowledged, withResend, type EventFate } from './service.js';

/**
 * Issue 37: the network between the receivers and their store (or queue engine) drops every
 * packet for a while, the partition of clouds: nothing arrives, neither an answer nor a reset. A
 * TCP proxy in this process stands between the children and a server of the test's own, in two
 * forms:
 * - `pause`: the open connections carry their bytes on after the heal, as TCP retransmits across a short partition;
 * - `drop`: the open connections (and those opened during the partition) stay silent for ever, as
 *   when a NAT or a load balancer forgot them; connections opened after the heal work.
 *
 * While the service's load runs (16 events in flight, 2 copies each), the partition lasts
 * `PARTITION_MS`. Then every web process is probed with a new event every 100 ms until it answers
 * 2xx: that is how long it takes to serve again after the heal. The service then sends once more
 * what it never got a 2xx for, and the effects are counted on the server directly.
 *
 * What the proxy leaves out: the kernel of this machine completes the TCP handshake of a connection
 * opened during the partition, and answers TCP keepalive probes, so neither connect timeouts nor
 * keepalive are what notices a dead connection here (command and query timeouts are).
 */
const SECRET = 'whsec_partitions';
const PARTITION_MS = 8_000;
const EVENTS = 160;
const PARTITION_AT = 30;
/** The service's deadline, asserted; its own timeout is longer, so a slow answer is measured, not cut short. */
const ANSWER_LIMIT_MS = 10_000;
const SERVICE_TIMEOUT_MS = 15_000;
/** The README's promise: a web process serves again within this long after the heal. */
const RECOVERY_LIMIT_MS = 10_000;
/** And a worker takes jobs again within this long. */
const WORKER_RECOVERY_LIMIT_MS = 30_000;

type Form = 'pause' | 'drop';
const FORMS: Form[] = ['pause', 'drop'];

const sharedRedis = await requireRedis();
const redisServer = hasRedisServer() ? await startRedis('everysec') : undefined;
const pgServer = await startPostgres();
const alive = (c: ChildReceiver) => c.process.exitCode === null && c.process.signalCode === null;

afterAll(async () => {
  await redisServer?.stop();
  await pgServer?.stop();
});

async function proxyTo(url: string): Promise<TcpProxy> {
  const u = new URL(url);
  return tcpProxy({ host: u.hostname, port: Number(u.port) });
}

interface Partitioned {
  fates: EventFate[];
  /** ms from the heal until each web process answered 2xx again. */
  recoveryMs: number[];
  /** When the heal came (`performance.now()`), and the first event each port acknowledged after it. */
  healedAt: number;
  firstAfterHeal: string[];
  resent: number;
  seconds: string;
}

/**
 * The service's load with a partition of `form` at event `PARTITION_AT`, the probes after the heal,
 * and the resend. Once a child has died nothing more is sent: the test fails on it.
 */
async function loadWithPartition(
  children: readonly ChildReceiver[],
  ports: number[],
  proxy: TcpProxy,
  run: string,
  form: Form,
): Promise<Partitioned> {
  const halt = () => !children.every(alive);
  const common = { ports, secret: SECRET, run, timeoutMs: SERVICE_TIMEOUT_MS, halt };
  const started = performance.now();
  let probes = 0;
  let partition:
    | Promise<{ healedAt: number; recoveryMs: number[]; firstAfterHeal: string[]; probes: { index: number; fate: EventFate }[] }>
    | undefined;

  /** One new event to `port` every 100 ms until one is answered 2xx. */
  const probe = async (port: number, healedAt: number) => {
    const fates: { index: number; fate: EventFate }[] = [];
    while (!halt()) {
      const index = EVENTS + probes++;
      const [fate] = await serviceLoad({ ...common, ports: [port], events: EVENTS, indices: [index], copies: 1, retryDelaysMs: [] });
      fates.push({ index, fate: fate! });
      if (fate!.acked) return { ms: performance.now() - healedAt, reference: fate!.reference, fates };
      if (performance.now() - healedAt > 60_000) break;
      await sleep(100); // real wait: between probes of a real server through the proxy
    }
    return { ms: Number.POSITIVE_INFINITY, reference: '', fates };
  };

  const first = await serviceLoad({
    ...common,
    events: EVENTS,
    onEvent: (i) => {
      if (i !== PARTITION_AT) return;
      partition = (async () => {
        if (form === 'pause') proxy.stall();
        else proxy.blackhole();
        await sleep(PARTITION_MS); // real wait: the partition (a real socket, stalled or blackholed) lasts this long
        proxy.restore();
        const healedAt = performance.now();
        const probed = await Promise.all(ports.map((port) => probe(port, healedAt)));
        return {
          healedAt,
          recoveryMs: probed.map((p) => Math.round(p.ms)),
          firstAfterHeal: probed.map((p) => p.reference),
          probes: probed.flatMap((p) => p.fates),
        };
      })();
    },
  });
  const p = await partition!;
  // Probes are events too: one the service never got a 2xx for is resent like the others.
  const indexOf = [...first.map((_, i) => i), ...p.probes.map((probe) => probe.index)];
  const { fates, resent } = await withResend(
    [...first, ...p.probes.map((probe) => probe.fate)],
    (positions) => serviceLoad({ ...common, events: EVENTS, indices: positions.map((at) => indexOf[at]!) }),
    halt,
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return { fates, recoveryMs: p.recoveryMs, healedAt: p.healedAt, firstAfterHeal: p.firstAfterHeal, resent, seconds };
}

/** What every case asserts of the answers: each within the deadline, each event acknowledged in the end, and the partition felt. */
function expectAnswers(r: Partitioned) {
  expect(slowAnswers(r.fates, ANSWER_LIMIT_MS)).toEqual([]);
  expect(unacknowledged(r.fates)).toEqual([]);
  expect(r.fates.some((f) => f.answers.some((a) => a.startsWith('5')))).toBe(true);
  for (const ms of r.recoveryMs) expect(ms).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
}

describe.skipIf(!sharedRedis || !redisServer || !pgServer)('a partition that drops every packet, then heals', () => {
  for (const form of FORMS) {
    it(`Redis store with the ledger, ${form}: the receivers stay up, answer within 10 s, serve again within 10 s of the heal, and every event runs`, async () => {
      const proxy = await proxyTo(redisServer!.url);
      const run = randomUUID();
      const env = {
        CHILD_STORE: 'redis',
        CHILD_URL: proxy.url(redisServer!.url),
        CHILD_SECRET: SECRET,
        CHILD_RUN: run,
        CHILD_EFFECT: 'redis-counter',
        CHILD_EFFECT_URL: sharedRedis!,
        CHILD_LEDGER: '1',
        CHILD_LEASE_MS: '3000',
        CHILD_BUDGET_MS: '2500',
      };
      const children = await Promise.all([startReceiver(env), startReceiver(env)]);
      const effects = new Redis(sharedRedis!);
      try {
        const r = await loadWithPartition(
          children,
          children.map((c) => c.port),
          proxy,
          run,
          form,
        );
        const counted = await countRedis(effects, run);
        const reruns = [...counted.values()].filter((n) => n > 1).length;
        console.info(
          `[faults:partition] redis ${form}: recovered in ${r.recoveryMs.join(', ')} ms, ${r.resent} resent, ${reruns} ran twice, ${r.seconds} s`,
          tally(r.fates),
        );
        expect(children.map(alive), children.map((c) => c.stderr()).join('\n')).toEqual([true, true]);
        expectAnswers(r);
        // A plain handler: at least once (one whose done record the partition lost runs again).
        expect(r.fates.filter((f) => !counted.get(f.reference)).map((f) => `${f.reference}: ${f.answers.join(', ')}`)).toEqual([]);
      } finally {
        effects.disconnect();
        await Promise.all(children.map((c) => c.stop()));
        await proxy.close();
      }
    }, 120_000);

    it(`Postgres store with the ledger and transactional() handlers, ${form}: the receivers stay up, answer within 10 s, serve again within 10 s, every effect exactly once`, async () => {
      const proxy = await proxyTo(pgServer!.url);
      const run = randomUUID();
      const reader = await effectsTable(pgServer!.url);
      const env = {
        CHILD_STORE: 'postgres',
        CHILD_URL: proxy.url(pgServer!.url),
        CHILD_SECRET: SECRET,
        CHILD_RUN: run,
        CHILD_EFFECT: 'pg-transactional',
        // A transaction the partition silenced ends at transactionTimeoutMs (15 s), past the budget:
        // answered 202, its failure would be a dead letter in the ledger, which the service never
        // re-sends. With 'retry' the answer is 503 and the re-send runs it once the claim is free.
        CHILD_AFTER_BUDGET: 'retry',
        CHILD_LEDGER: '1',
        CHILD_LEASE_MS: '3000',
        CHILD_BUDGET_MS: '2500',
      };
      const children = await Promise.all([startReceiver(env), startReceiver(env)]);
      try {
        const r = await loadWithPartition(
          children,
          children.map((c) => c.port),
          proxy,
          run,
          form,
        );
        const counted = await countPg(reader, run);
        console.info(
          `[faults:partition] postgres ${form}: recovered in ${r.recoveryMs.join(', ')} ms, ${r.resent} resent, ${r.seconds} s`,
          tally(r.fates),
        );
        expect(children.map(alive), children.map((c) => c.stderr()).join('\n')).toEqual([true, true]);
        expectAnswers(r);
        expect(
          r.fates.filter((f) => counted.get(f.reference) !== 1).map((f) => `${f.reference}: ${counted.get(f.reference) ?? 0}`),
        ).toEqual([]);
      } finally {
        await Promise.all(children.map((c) => c.stop()));
        await proxy.close();
        await reader.end();
      }
    }, 120_000);

    for (const engine of ['bullmq', 'pg-boss'] as Engine[]) {
      const through = engine === 'bullmq' ? 'Redis (the handoff and the worker)' : 'Postgres (store, handoff and worker)';
      it(`${engine}, ${form} in front of ${through}: web and worker stay up, answers within 10 s, the web serves again within 10 s, the worker drains, every effect exactly once`, async () => {
        const partitioned = engine === 'bullmq' ? redisServer!.url : pgServer!.url;
        const proxy = await proxyTo(partitioned);
        const names = runNames('part', engine);
        const pool = new pg.Pool({ connectionString: pgServer!.url, max: 2 });
        pool.on('error', () => {});
        await (await effectsTable(pgServer!.url)).end();
        const env = {
          ...queueEnv(engine, {
            queue: names.queue,
            table: names.table,
            pgUrl: engine === 'pg-boss' ? proxy.url(pgServer!.url) : pgServer!.url,
            redisUrl: engine === 'bullmq' ? proxy.url(redisServer!.url) : undefined,
          }),
          CHILD_SECRET: SECRET,
          CHILD_LEASE_MS: '3000',
          CHILD_BUDGET_MS: '2500',
        };
        const [web, worker] = await Promise.all([
          startChild(WEB, env),
          startChild(WORKER, {
            ...env,
            CHILD_RUN: names.run,
            CHILD_EFFECT: 'transactional',
            CHILD_LEASE_MS: '1500',
            CHILD_STALL_MS: '2000',
          }),
        ]);
        const view = engineView(engine, names.queue, () => pool, redisServer!.url);
        try {
          const r = await loadWithPartition([web, worker], [web.port], proxy, names.run, form);
          // The worker: how long after the heal the first event the web took after it has its effect.
          const workerBack = await until(async () => !alive(worker) || (await countPg(pool, names.run)).has(r.firstAfterHeal[0]!), {
            timeoutMs: 60_000,
            intervalMs: 100,
            what: 'the first event after the heal to take effect',
          }).then(
            () => Math.round(performance.now() - r.healedAt),
            () => Number.POSITIVE_INFINITY,
          );
          const references = r.fates.map((f) => f.reference);
          const drained = await until(
            async () =>
              ![web, worker].every(alive) ||
              ((await countPg(pool, names.run)).size >= references.length && (await view.unfinished()) === 0),
            {
              timeoutMs: 60_000,
              intervalMs: 250,
              what: async () =>
                `the drain: effects ${(await countPg(pool, names.run)).size}/${references.length}, jobs ${JSON.stringify(await view.states())}\n${worker.stderr()}`,
            },
          ).then(
            () => 'drained',
            (e: Error) => e.message,
          );
          const counted = await countPg(pool, names.run);
          console.info(
            `[faults:partition] ${engine} ${form}: web recovered in ${r.recoveryMs.join(', ')} ms, worker in ${workerBack} ms, ${r.resent} resent, ${r.seconds} s, jobs ${JSON.stringify(await view.states())}`,
            tally(r.fates),
          );
          expect([web, worker].map(alive), `web:\n${web.stderr()}\nworker:\n${worker.stderr()}`).toEqual([true, true]);
          expectAnswers(r);
          expect(workerBack).toBeLessThanOrEqual(WORKER_RECOVERY_LIMIT_MS);
          expect(drained).toBe('drained');
          expect(references.filter((ref) => counted.get(ref) !== 1).map((ref) => `${ref}: ${counted.get(ref) ?? 0}`)).toEqual([]);
          expect(await view.deadLetters()).toBe(0);
        } finally {
          await Promise.all([web.stop(), worker.stop()]);
          await proxy.close();
          await view.cleanup();
          await pool.end();
        }
      }, 180_000);
    }
  }
});
