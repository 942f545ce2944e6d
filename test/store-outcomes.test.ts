import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, type Store } from '@payhook/core';
import { COMMON_OUTCOMES } from '@payhook/core/lifecycle';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';

// The store's outcome names agree with the receiver's: a done record of a handler that threw
// NonRetriableError is `rejected`. Records written before were `failed` and live for the store's
// retention (30 days by default): each store reads them as `rejected`, and as done.

const redisUrl = await requireRedis();
const postgresUrl = await requirePostgres();
const secret = 'whsec_store_outcomes';

/** A record written as an earlier version wrote it reads as rejected, and the event as done: no handler runs. */
async function readsAsRejectedAndDone(store: Store, write: (key: string) => Promise<void>) {
  let runs = 0;
  const receiver = createReceiver({ secret, store, logger: () => {} }).on('payment.success', () => void (runs += 1));
  const event = createEvent('payment.success');
  const key = receiver.dedupeKey(event);
  await write(key);

  expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'rejected', attempt: 1 });
  expect(await store.claim(key, 5_000)).toMatchObject({ status: 'done', outcome: 'rejected' });
  const res = await receiver.handle(signedRequest(event, { secret }));
  expect(await res.json()).toEqual({ outcome: 'duplicate' });
  expect(runs).toBe(0);
}

describe.skipIf(!redisUrl)('redis store outcomes', () => {
  const redis = new Redis(redisUrl!);
  const prefix = `payhook-test-${randomUUID().slice(0, 8)}:`;
  const store = redisStore({ client: redis, prefix });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("reads a done record written as 'failed' by an earlier version as 'rejected', and as done", async () => {
    await readsAsRejectedAndDone(store, async (key) => {
      // The record's hash as the store's scripts wrote it, with the old name.
      const rec = `${prefix}{${key}}:rec`;
      await redis.hset(rec, { state: 'done', attempt: '1', outcome: 'failed', completedAt: String(Date.now()), token: randomUUID() });
      await redis.pexpire(rec, 60_000);
    });
  });

  it("writes 'rejected'", async () => {
    const key = `k-${randomUUID()}`;
    const c = await store.claim(key, 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    await store.complete(key, c.token, { outcome: 'rejected' });
    expect(await redis.hget(`${prefix}{${key}}:rec`, 'outcome')).toBe('rejected');
  });
});

describe.skipIf(!postgresUrl)('postgres store outcomes', () => {
  const pool = new pg.Pool({ connectionString: postgresUrl!, max: 2 });
  const table = `payhook_test_${randomUUID().slice(0, 8)}`;
  const store = postgresStore({ pool, table, ledger: {} });
  afterAll(async () => {
    await store.close();
    await pool.query(`drop table if exists ${table}, ${table}_ledger`);
    await pool.end();
  });

  it("reads a done record written as 'failed' by an earlier version as 'rejected', and as done", async () => {
    await store.createTable();
    await readsAsRejectedAndDone(store, async (key) => {
      await pool.query(
        `insert into ${table} (key, state, attempt, token, lease_expires_at, outcome, completed_at, expires_at)
         values ($1, 'done', 1, $2, null, 'failed', now(), now() + interval '1 hour')`,
        [key, randomUUID()],
      );
    });
  });

  it("keeps 'rejected' in the outcome column as 'failed', which every table's CHECK allows", async () => {
    await store.createTable();
    const key = `k-${randomUUID()}`;
    const c = await store.claim(key, 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.complete(key, c.token, { outcome: 'rejected' })).toBe(true);
    const { rows } = await pool.query<{ outcome: string }>(`select outcome from ${table} where key = $1`, [key]);
    expect(rows).toEqual([{ outcome: 'failed' }]);
    expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'rejected' });
  });

  it("indexes every outcome but core's common ones: the ledger's partial index is built from OUTCOMES", async () => {
    await store.createTable();
    const { rows } = await pool.query<{ indexdef: string }>(`select indexdef from pg_indexes where tablename = $1 and indexname = $2`, [
      `${table}_ledger`,
      `${table}_ledger_outcome_idx`,
    ]);
    expect(rows).toHaveLength(1);
    // Postgres shows the list as it parsed it: outcome <> ALL (ARRAY['processed'::text, ...]).
    const list = /<> ALL \(+ARRAY\[(.*?)\]\)/.exec(rows[0]!.indexdef)?.[1];
    expect(list, rows[0]!.indexdef).toBeDefined();
    const names = [...list!.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    expect(names).toEqual([...COMMON_OUTCOMES]);
  });
});
