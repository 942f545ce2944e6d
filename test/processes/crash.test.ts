import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import type pg from 'pg';
import type { Store } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { sqliteStore } from '@payhook/store-sqlite';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvent, signedBody } from '@payhook/testing';
import { post, startReceiver, type ChildReceiver, type Reply } from '@payhook/test-support/children';
import { countPg, countRedis, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';

const SECRET = 'whsec_crash';
const LEASE_MS = 1_500;
const BUDGET_MS = 1_000;

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

type Point = 'after-claim' | 'mid-handler' | 'after-effect';
interface Case {
  point: Point;
  /** What a duplicate gets while the dead process's lease still holds. */
  during: string;
  /** What the delivery after the lease gets. */
  after: string;
  /** Runs of the effect in the end. */
  effects: number;
}

/**
 * kill -9 a receiver at a point of its work; once the lease lapses the next delivery, on another
 * process, runs the event, and we count how many times its effect happened.
 */
function crashes(store: 'redis' | 'postgres' | 'sqlite', effect: string, url: string | undefined, cases: Case[]) {
  describe.skipIf(!url)(`kill -9 on ${store} (${effect})`, () => {
    const run = randomUUID();
    // SQLite keeps the claims in a file; the effects are counted in Redis, as for the Redis store.
    const effectUrl = store === 'sqlite' ? redisUrl : url;
    const env = {
      CHILD_STORE: store,
      CHILD_URL: url!,
      CHILD_EFFECT_URL: effectUrl!,
      CHILD_SECRET: SECRET,
      CHILD_RUN: run,
      CHILD_EFFECT: effect,
      CHILD_LEASE_MS: String(LEASE_MS),
      CHILD_BUDGET_MS: String(BUDGET_MS),
    };
    let survivor: ChildReceiver;
    const victims = new Map<Point, ChildReceiver>();
    let reader: Store;
    let redis: Redis | undefined;
    let pool: pg.Pool | undefined;
    const count = async (ref: string) => (await (redis ? countRedis(redis, run) : countPg(pool!, run))).get(ref) ?? 0;

    beforeAll(async () => {
      // Start every process at once: a TypeScript child takes a second or two to boot.
      const started = await Promise.all([env, ...cases.map((c) => ({ ...env, CHILD_HANG_AT: c.point }))].map(startReceiver));
      survivor = started[0]!;
      for (const [i, c] of cases.entries()) victims.set(c.point, started[i + 1]!);
      if (store === 'sqlite') {
        redis = new Redis(effectUrl!);
        reader = sqliteStore({ path: url!, driver: Database });
      } else if (store === 'redis') {
        redis = new Redis(url!);
        reader = redisStore({ url: url!, prefix: 'payhook-test:', retentionMs: 3_600_000 });
      } else {
        pool = await effectsTable(url!);
        reader = postgresStore({ connectionString: url! });
      }
    }, 30_000);
    afterAll(async () => {
      await Promise.all([survivor, ...victims.values()].map((c) => c?.stop()));
      redis?.disconnect();
      await pool?.end();
      await reader?.close?.();
    });

    for (const c of cases) {
      it(`${c.point}: ${c.effects === 1 ? 'exactly once' : `at least once (${c.effects} runs)`} after the lease lapses`, async () => {
        const victim = victims.get(c.point)!;
        const event = createEvent('payment.success', { reference: `crash_${c.point}_${run}` });
        const key = `${event.mode}:${event.reference}:${event.event}`;
        const body = JSON.stringify(event);
        const { headers } = signedBody(body, { secret: SECRET });

        const first = post(victim.port, body, headers).then(
          (r) => r,
          (e: Error) => e,
        );
        await victim.reached(c.point);
        await victim.kill9();
        // The service never got an answer from the dead process, so it will redeliver.
        expect(await first).toBeInstanceOf(Error);
        const before = await count(event.reference);
        expect(before).toBe(c.point === 'after-effect' ? 1 : 0);

        const during: Reply = await post(survivor.port, body, headers);
        expect(`${during.status} ${during.outcome}`).toBe(c.during);

        // The killed process's lease lapses on Redis's or Postgres's own clock, some time after its
        // claim (which came after the request was sent): wait until the store no longer reads it as held.
        await vi.waitFor(async () => expect((await reader.get(key))?.state, 'the dead process still holds its claim').not.toBe('claimed'), {
          timeout: 3 * LEASE_MS,
          interval: 50,
        });
        const after = await post(survivor.port, body, headers);
        expect(`${after.status} ${after.outcome}`, survivor.stderr()).toBe(c.after);
        const again = await post(survivor.port, body, headers);
        expect(`${again.status} ${again.outcome}`).toBe('200 duplicate');

        expect(await count(event.reference)).toBe(c.effects);
        const record = await reader.get(key);
        // A run after a crash is attempt 2; a transactional effect committed its done record in attempt 1.
        expect(record).toMatchObject({ state: 'done', outcome: 'ok', attempt: c.after === '200 processed' ? 2 : 1 });
      }, 20_000);
    }
  });
}

const resumed = (point: Point, effects = 1): Case => ({ point, during: '409 in-progress', after: '200 processed', effects });

crashes('redis', 'redis-counter', redisUrl, [
  resumed('after-claim'),
  resumed('mid-handler'),
  // The effect happened but the done record did not: the lease lapses and the event runs again.
  // This is the at-least-once window of any effect outside the store; make such effects idempotent.
  resumed('after-effect', 2),
]);

crashes('postgres', 'pg-transactional', pgUrl, [
  resumed('after-claim'),
  // Killed inside the transaction: Postgres rolls it back, the effect never happened.
  resumed('mid-handler'),
  // The effect committed together with the done record: the redelivery is a duplicate, at once.
  { point: 'after-effect', during: '200 duplicate', after: '200 duplicate', effects: 1 },
]);

crashes('postgres', 'pg-insert', pgUrl, [
  resumed('mid-handler'),
  // Without transactional(), the same window as Redis: the effect committed on its own.
  resumed('after-effect', 2),
]);

// SQLite: one file, its WAL synced at every commit. The effect is outside the store (a Redis counter),
// so the windows are Redis's; what the file adds is that claims and done records outlive the process.
const sqliteDir = mkdtempSync(join(tmpdir(), 'payhook-crash-sqlite-'));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));
const sqlitePath = redisUrl ? join(sqliteDir, 'payhook.db') : undefined;

crashes('sqlite', 'redis-counter', sqlitePath, [resumed('after-claim'), resumed('mid-handler'), resumed('after-effect', 2)]);

describe.skipIf(!sqlitePath)('kill -9 on sqlite, then a new process on the same file', () => {
  it('answers an event done before the kill as a duplicate, and runs nothing again', async () => {
    const run = randomUUID();
    const env = {
      CHILD_STORE: 'sqlite',
      CHILD_URL: sqlitePath!,
      CHILD_EFFECT_URL: redisUrl!,
      CHILD_SECRET: SECRET,
      CHILD_RUN: run,
      CHILD_EFFECT: 'redis-counter',
    };
    const redis = new Redis(redisUrl!);
    try {
      const event = createEvent('payment.success', { reference: `restart_${run}` });
      const body = JSON.stringify(event);
      const { headers } = signedBody(body, { secret: SECRET });
      const before = await startReceiver(env);
      expect(`${(await post(before.port, body, headers)).outcome}`).toBe('processed');
      await before.kill9();
      const after = await startReceiver(env);
      try {
        const again = await post(after.port, body, headers);
        expect(`${again.status} ${again.outcome}`, after.stderr()).toBe('200 duplicate');
        expect((await countRedis(redis, run)).get(event.reference)).toBe(1);
      } finally {
        await after.stop();
      }
    } finally {
      redis.disconnect();
    }
  }, 30_000);
});
