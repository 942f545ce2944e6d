import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { createEvent, seededRandom, signedBody } from '@payhook/testing';
import { startReceiver, post, type ChildReceiver, type Reply } from '@payhook/test-support/children';
import { countPg, countRedis, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';

const SECRET = 'whsec_multi_process';
const PROCESSES = 4;
const ROUNDS = 200;
const CONCURRENT = 50;

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

/**
 * Four receiver processes on one shared store; every round sends 50 identical deliveries at once,
 * spread across them. Exactly one handler run per event, and never a 5xx.
 */
function multiProcess(name: string, url: string | undefined, effect: string, count: (run: string) => Promise<Map<string, number>>) {
  describe.skipIf(!url)(`${PROCESSES} processes on one ${name} store`, () => {
    const run = randomUUID();
    let children: ChildReceiver[] = [];

    beforeAll(async () => {
      children = await Promise.all(
        Array.from({ length: PROCESSES }, () =>
          startReceiver({ CHILD_STORE: name, CHILD_URL: url!, CHILD_SECRET: SECRET, CHILD_RUN: run, CHILD_EFFECT: effect }),
        ),
      );
    }, 30_000);
    afterAll(async () => {
      await Promise.all(children.map((c) => c.stop()));
    });

    it(`runs each of ${ROUNDS} events once under ${CONCURRENT} concurrent duplicates`, async () => {
      const statuses = new Map<string, number>();
      const references: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const event = createEvent('payment.success', { reference: `mp_${run}_${round}` });
        references.push(event.reference);
        const body = JSON.stringify(event);
        const { headers } = signedBody(body, { secret: SECRET });
        const replies: Reply[] = await Promise.all(
          Array.from({ length: CONCURRENT }, (_, i) => post(children[i % PROCESSES]!.port, body, headers)),
        );
        for (const r of replies) statuses.set(`${r.status} ${r.outcome}`, (statuses.get(`${r.status} ${r.outcome}`) ?? 0) + 1);
        const processed = replies.filter((r) => r.outcome === 'processed');
        if (processed.length !== 1 || replies.some((r) => r.status >= 500)) {
          throw new Error(
            `round ${round}: ${processed.length} processed, replies ${JSON.stringify(replies)}\n` +
              children.map((c) => c.stderr()).join('\n'),
          );
        }
      }
      console.info(`[multi-process ${name}] replies:`, Object.fromEntries(statuses));
      const effects = await count(run);
      expect(effects.size).toBe(ROUNDS);
      for (const ref of references) expect(effects.get(ref), ref).toBe(1);
      // Only 200 (processed, duplicate) and 409 (in progress): the service retries a 409 later.
      for (const key of statuses.keys()) expect(['200 processed', '200 duplicate', '409 in-progress']).toContain(key);
      expect(statuses.get('200 processed')).toBe(ROUNDS);
    }, 60_000);
  });
}

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  if (redisUrl) redis = new Redis(redisUrl);
  if (pgUrl) pool = await effectsTable(pgUrl);
});
afterAll(async () => {
  redis?.disconnect();
  await pool?.end();
});

multiProcess('redis', redisUrl, 'redis-counter', (run) => countRedis(redis!, run));
multiProcess('postgres', pgUrl, 'pg-insert', (run) => countPg(pool!, run));

/**
 * SQLite: four processes on one file share claims through it. 10,000 deliveries of 7,000 events
 * (3,000 copies, 30%), 32 in flight across the processes, each copy close behind its event so
 * that most land while it runs. A 409 is retried, as the service would. Each event's effect
 * (a Redis counter, outside the store) happens once, and nothing gets a 5xx.
 */
describe.skipIf(!redisUrl)(`${PROCESSES} processes on one SQLite file`, () => {
  const run = randomUUID();
  const dir = mkdtempSync(join(tmpdir(), 'payhook-mp-sqlite-'));
  let children: ChildReceiver[] = [];
  beforeAll(async () => {
    const env = {
      CHILD_STORE: 'sqlite',
      CHILD_URL: join(dir, 'payhook.db'),
      CHILD_EFFECT_URL: redisUrl!,
      CHILD_SECRET: SECRET,
      CHILD_RUN: run,
      CHILD_EFFECT: 'redis-counter',
    };
    children = await Promise.all(Array.from({ length: PROCESSES }, () => startReceiver(env)));
  }, 30_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs each of 7,000 events once under 10,000 deliveries with 30% copies', async () => {
    const random = seededRandom(34);
    const events = Array.from({ length: 7_000 }, (_, i) => createEvent('payment.success', { reference: `sq_${run}_${i}` }));
    // Each copy lands within 20 deliveries of its event, so with 32 in flight most arrive while it runs.
    const copies = Array.from({ length: 3_000 }, () => Math.floor(random() * events.length));
    const order = [...events.map((_, i) => ({ i, at: i })), ...copies.map((i) => ({ i, at: i + random() * 20 }))]
      .sort((a, b) => a.at - b.at)
      .map((d) => d.i);
    const signed = events.map((e) => {
      const body = JSON.stringify(e);
      return { body, headers: signedBody(body, { secret: SECRET }).headers };
    });
    const statuses = new Map<string, number>();
    let next = 0;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < order.length) {
          const { body, headers } = signed[order[next++]!]!;
          // A 409 is retried, as the service would (sooner: the running copy finishes within milliseconds).
          for (;;) {
            const r = await post(children[sent++ % PROCESSES]!.port, body, headers);
            statuses.set(`${r.status} ${r.outcome}`, (statuses.get(`${r.status} ${r.outcome}`) ?? 0) + 1);
            if (r.status >= 500) throw new Error(`a ${r.status} ${r.outcome}:\n${children.map((c) => c.stderr()).join('\n')}`);
            if (r.status !== 409) break;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      }),
    );
    console.info('[multi-process sqlite] replies:', Object.fromEntries(statuses));
    const effects = await countRedis(redis!, run);
    expect(effects.size).toBe(events.length);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    expect(statuses.get('200 processed')).toBe(events.length);
    for (const key of statuses.keys()) expect(['200 processed', '200 duplicate', '409 in-progress']).toContain(key);
  }, 180_000);
});
