import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { createEvent, signedBody } from '@payhook/testing';
import { startReceiver, post, type ChildReceiver, type Reply } from './children/spawn.js';
import { countPg, countRedis, effectsTable } from './effects.js';
import { requirePostgres, requireRedis } from './services.js';

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
