import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startReceiver, type ChildReceiver } from '@payhook/test-support/children';
import { countRedis } from '@payhook/test-support/effects';
import { requireRedis } from '@payhook/test-support/services';
import { startRedisReplicated } from './redis-replicas.js';
import { hasRedisServer } from '@payhook/test-support/servers/redis-server';
import { serviceLoad, tally, unacknowledged } from './service.js';

/**
 * Exactly once across a replica failover: the primary, with a replica 250 ms behind, is killed
 * with SIGKILL at the middle event while two receiver processes run deliveries with duplicates
 * (every fifth event has a third copy). Whatever its stream had not yet carried to the replica is
 * lost, and the replica becomes the primary: by hand, moving the receivers' address to it as a
 * managed service's DNS flip does, or by three Sentinels. Then every event is delivered once more,
 * and the effects are counted on the shared Redis, which nothing breaks.
 *
 * With `waitForReplicas` (Redis `WAIT 1` after each claim, complete and extend) nothing the store
 * was told is done can be missing on the replica, so nothing runs twice. Without it, the done
 * records of the failover's last 250 ms are gone, and their events run again: the store warns at
 * start-up, and says at the switch which window to reconcile.
 */
const SECRET = 'whsec_redis_failover';
const EVENTS = 300;
const SWITCH_AT = 150;
const THIRD_COPY_EVERY = 5;
const LAG_MS = 250;
// Longer than the lease: a claim that reached the replica but whose answer died with the primary holds its event that long.
const RETRIES = [250, 500, 1_000, 2_000, 4_000, 8_000];
// Past this the service stops sending and the case fails on its own, not at the test's timeout (which would leave its processes behind).
const DEADLINE_MS = 40_000;

const sharedUrl = await requireRedis();
const installed = hasRedisServer();

interface Case {
  name: string;
  sentinels: boolean;
  wait: boolean;
}

async function underFailover(c: Case) {
  const startedAt = performance.now();
  const redis = await startRedisReplicated({ lagMs: LAG_MS, sentinels: c.sentinels });
  const run = randomUUID();
  const env: Record<string, string> = {
    CHILD_STORE: 'redis',
    // Unused through Sentinels, but the child wants it.
    CHILD_URL: redis.url,
    CHILD_SECRET: SECRET,
    CHILD_RUN: run,
    CHILD_EFFECT: 'redis-counter',
    CHILD_EFFECT_URL: sharedUrl!,
    // Long enough to outlast the switch: a claim's lease must not lapse while its delivery waits for the new primary.
    CHILD_LEASE_MS: '10000',
    CHILD_BUDGET_MS: '8000',
    // The store's default wait, under its 2 s command and socket timeouts: a reply later than those ends the connection.
    ...(c.wait && { CHILD_REDIS_WAIT: '1', CHILD_REDIS_WAIT_MS: '1000' }),
    ...(redis.sentinelAddrs && { CHILD_REDIS_SENTINELS: redis.sentinelAddrs.join(','), CHILD_REDIS_MASTER: redis.masterName }),
  };
  let children: ChildReceiver[] = [];
  try {
    const spawned = await Promise.allSettled([startReceiver(env), startReceiver(env)]);
    children = spawned.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    for (const s of spawned) if (s.status === 'rejected') throw s.reason;
    const ports = children.map((child) => child.port);
    const dead = () => children.some((child) => child.process.exitCode !== null || child.process.signalCode !== null);
    let halted = false;
    const halt = () => (halted ||= dead() || performance.now() - startedAt > DEADLINE_MS);
    const load = { ports, secret: SECRET, run, events: EVENTS, inFlight: 32, retryDelaysMs: RETRIES, halt };

    // The third copy of an event leaves when its first two do.
    const openers: (() => void)[] = [];
    const opened = Array.from({ length: EVENTS }, (_, i) => new Promise<void>((r) => (openers[i] = r)));
    let switchAt = Number.POSITIVE_INFINITY;
    let switching: Promise<void> | undefined;
    const [first, third] = await Promise.all([
      serviceLoad({
        ...load,
        onEvent: (i) => {
          openers[i]!();
          if (i !== SWITCH_AT) return;
          switchAt = performance.now();
          switching = redis.failover();
          switching.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
        },
        // Halted, it leaves events unopened: their third copies are then not sent either.
      }).finally(() => {
        for (const open of openers) open();
      }),
      serviceLoad({
        ...load,
        copies: 1,
        inFlight: 8,
        indices: Array.from({ length: EVENTS / THIRD_COPY_EVERY }, (_, k) => k * THIRD_COPY_EVERY),
        onEvent: (i) => opened[i],
      }),
    ]);
    await switching;
    // Every event once more: the copies the service sends when it never got an answer.
    const late = await serviceLoad({ ...load, copies: 1 });
    const effects = await countRedis(sharedUrl!, run);
    const alive = children.map((child) => child.process.exitCode === null && child.process.signalCode === null);
    const all = [...first, ...third, ...late];
    const twice = [...effects].filter(([, n]) => n > 1);
    const reruns = twice.length;
    // For a failure message: each event run twice, with every answer its copies got.
    const rerun = twice.map(
      ([ref, n]) => `${ref} ran ${n} times: ${all.flatMap((f) => (f.reference === ref ? f.answers : [])).join(', ')}`,
    );
    const ranAgain = first.filter((f) => (f.ackedAt ?? Number.POSITIVE_INFINITY) < switchAt && (effects.get(f.reference) ?? 0) > 1).length;
    const acked = all.filter((f) => f.acked);
    const lost = new Set(acked.filter((f) => (effects.get(f.reference) ?? 0) === 0).map((f) => f.reference)).size;
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    console.info(
      `[faults:redis-failover] ${c.name}: ${reruns} of ${EVENTS} events ran twice (${ranAgain} acknowledged before the switch), ` +
        `${lost} acknowledged without their effect; ${seconds} s; switch: ${redis.timeline()}`,
      tally(all),
    );
    const stderr = children.map((child) => child.stderr()).join('\n');
    const log = [digest(stderr), ...(redis.sentinelEvents?.() ?? [])].join('\n');
    return { first, third, late, effects, alive, reruns, rerun, stderr, log, halted };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await redis.stop();
  }
}

/** The children's stderr for a failure message: each kind of line once (the 503s come by the hundred), with how often. */
function digest(stderr: string): string {
  const kinds = new Map<string, number>();
  for (const line of stderr.split('\n').filter(Boolean)) {
    const kind = line.replace(/sandbox:\S+?(?=["\s]|$)/g, '<key>').slice(0, 400);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds].map(([kind, n]) => `${n} × ${kind}`).join('\n');
}

/** Every event acknowledged, and every acknowledged event's effect ran. */
function expectDelivered(r: Awaited<ReturnType<typeof underFailover>>) {
  expect(r.halted, `deliveries were still running ${DEADLINE_MS / 1000} s after the start\n${r.log}`).toBe(false);
  expect(r.alive, r.log).toEqual([true, true]);
  for (const fates of [r.first, r.third, r.late]) expect(unacknowledged(fates), r.log).toEqual([]);
  for (const f of r.first) expect(r.effects.get(f.reference) ?? 0, f.reference).toBeGreaterThanOrEqual(1);
}

/** The store's error at the switch: another primary, and the reconcile that recovers the window before it. */
function expectSwitchNoticed(r: { stderr: string; log: string }) {
  const line = /^.*different primary.*$/m.exec(r.stderr)?.[0];
  expect(line, `no switch error in the children's stderr:\n${r.log}`).toBeDefined();
  expect(line).toMatch(/payhook reconcile --since/);
}

const asyncWarning = (stderr: string) => stderr.split('\n').filter((line) => /^WARN .*asynchronous replica/.test(line));

describe.skipIf(!sharedUrl || !installed)('Redis failed over to a replica 250 ms behind, under load', () => {
  const withWait = (name: string, sentinels: boolean) =>
    it(`${name}, waitForReplicas 1: nothing runs twice, nothing acknowledged is lost, no warning`, async () => {
      const r = await underFailover({ name: `${name}, WAIT 1`, sentinels, wait: true });
      expectDelivered(r);
      expect(r.rerun, r.log).toEqual([]);
      expect(asyncWarning(r.stderr)).toEqual([]);
      expectSwitchNoticed(r);
    }, 90_000);

  withWait('switched by hand', false);
  withWait('3 Sentinels', true);

  it('switched by hand, no wait: the store warned at start-up, and what the replica missed runs again', async () => {
    const r = await underFailover({ name: 'switched by hand, no wait', sentinels: false, wait: false });
    expectDelivered(r);
    // The start-up warning, on one line.
    expect(asyncWarning(r.stderr)[0], r.log).toMatch(/waitForReplicas/);
    // The done records of the last 250 ms before the kill: about 120 to 150 of the 150 events before it, at this pace.
    expect(r.reruns).toBeGreaterThan(0);
    expectSwitchNoticed(r);
  }, 90_000);
});
