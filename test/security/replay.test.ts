import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createReceiver, type Store } from '@payhook/core';
import { DEFAULT_RETENTION_MS } from '@payhook/core/store';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { afterAll, describe, expect, it } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';

/**
 * The signature carries no timestamp: a captured delivery verifies forever. What stops a replay is
 * the done record, which the durable stores keep 30 days by default, across restarts and processes.
 */
const SECRET = 'whsec_replay_secret';
const databaseUrl = await requirePostgres();
const redisUrl = await requireRedis();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** A receiver on `store` counting its handler runs; a fresh one stands for a restarted process. */
function shop(store: Store) {
  const runs: string[] = [];
  const receiver = createReceiver({ secret: SECRET, store, logger: { warn() {}, error() {} } }).onAny((e) => void runs.push(e.event));
  return { receiver, runs };
}

async function replayAfterRestart(makeStore: () => Store) {
  const event = createEvent('payment.success', { reference: `ref_replay_${randomUUID()}` });
  const captured = signedRequest(event, { secret: SECRET });
  const replay = () => captured.clone();
  const first = shop(makeStore());
  expect((await first.receiver.handle(replay())).status).toBe(200);
  expect(first.runs).toEqual(['payment.success']);
  // Another process (or the same after a restart) gets the captured bytes again.
  const second = shop(makeStore());
  const res = await second.receiver.handle(replay());
  expect([res.status, await res.text()]).toEqual([200, '{"outcome":"duplicate"}']);
  expect(second.runs).toEqual([]);
  return event;
}

describe.skipIf(!databaseUrl)('replay against the Postgres store', () => {
  const table = `payhook_replay_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const stores: ReturnType<typeof postgresStore>[] = [];
  const make = () => {
    const s = postgresStore({ connectionString: databaseUrl!, table });
    stores.push(s);
    return s;
  };
  closers.push(async () => {
    const c = new pg.Client({ connectionString: databaseUrl! });
    await c.connect();
    await c.query(`DROP TABLE IF EXISTS "${table}"`);
    await c.end();
    for (const s of stores) await s.close?.();
  });

  it('a captured delivery replayed to a restarted process runs nothing, and the done record lasts 30 days', async () => {
    const event = await replayAfterRestart(make);
    const c = new pg.Client({ connectionString: databaseUrl! });
    await c.connect();
    const { rows } = await c.query(
      `SELECT state, extract(epoch from expires_at - completed_at) * 1000 AS kept FROM "${table}" WHERE key = $1`,
      [`sandbox:${event.reference}:payment.success`],
    );
    await c.end();
    expect(rows[0].state).toBe('done');
    expect(Number(rows[0].kept)).toBeGreaterThan(DEFAULT_RETENTION_MS - 60_000);
    expect(DEFAULT_RETENTION_MS).toBe(30 * 24 * 60 * 60 * 1000);
  });
});

describe.skipIf(!redisUrl)('replay against the Redis store', () => {
  const prefix = `payhook-replay-${randomUUID().slice(0, 8)}:`;
  const redis = redisUrl ? new Redis(redisUrl) : undefined;
  const stores: Store[] = [];
  closers.push(async () => {
    for (const s of stores) await s.close?.();
    redis?.disconnect();
  });
  it('a captured delivery replayed to a restarted process runs nothing, and the done record lasts 30 days', async () => {
    const event = await replayAfterRestart(() => {
      const s = redisStore({ url: redisUrl!, prefix });
      stores.push(s);
      return s;
    });
    const ttl = await redis!.pttl(`${prefix}{sandbox:${event.reference}:payment.success}:rec`);
    expect(ttl).toBeGreaterThan(DEFAULT_RETENTION_MS - 60_000);
  });
});
