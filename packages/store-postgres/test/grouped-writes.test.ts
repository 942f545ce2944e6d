import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { ClaimResult } from '@payhook/core/store';
import { postgresStore } from '@payhook/store-postgres';
import { requirePostgres } from '@payhook/test-support/services';

const url = await requirePostgres();

/** A store on its own pool, counting the statements that claim or complete (one-key or grouped), and the deadlocks Postgres broke. */
function countedStore(table: string) {
  const pool = new pg.Pool({ connectionString: url! });
  const sent = { claims: 0, completes: 0, groups: 0, deadlocks: 0 };
  const query = pool.query.bind(pool);
  pool.query = ((config: { text?: string }, ...rest: unknown[]) => {
    const text = typeof config === 'object' && config !== null ? (config.text ?? '') : String(config);
    if (text.includes('INSERT INTO')) sent.claims++;
    if (text.includes("SET state = 'done', outcome = ")) sent.completes++;
    if (text.includes('unnest(')) sent.groups++;
    const result = (query as (...a: unknown[]) => Promise<unknown>)(config, ...rest);
    // Seen here, before the store sends a deadlocked statement once more.
    result.catch((error: { code?: string }) => {
      if (error.code === '40P01') sent.deadlocks++;
    });
    return result;
  }) as typeof pool.query;
  return { store: postgresStore({ pool, table, purge: false }), pool, sent };
}

const claimed = (r: ClaimResult) => (r.status === 'claimed' ? r : undefined);

describe.skipIf(!url)('postgres: claims and done records of one turn go as one statement', () => {
  const table = `payhook_group_${randomUUID().slice(0, 8)}`;
  const a = countedStore(table);
  const b = countedStore(table);
  const run = randomUUID().slice(0, 8);
  afterAll(async () => {
    await a.pool.query(`drop table if exists ${table}`);
    await Promise.all([a.store.close(), b.store.close(), a.pool.end(), b.pool.end()]);
  });

  it('claims 32 new keys in one statement and completes them in another, each answered as alone', async () => {
    await a.store.createTable();
    const keys = Array.from({ length: 32 }, (_, i) => `${run}:new_${i}`);
    const before = { ...a.sent };
    const claims = await Promise.all(keys.map((k) => a.store.claim(k, 30_000)));
    expect(a.sent.claims - before.claims, 'claim statements for 32 claims of one turn').toBe(1);
    expect(claims.every((c) => c.status === 'claimed' && c.attempt === 1)).toBe(true);
    expect(new Set(claims.map((c) => claimed(c)?.token)).size).toBe(32);

    const held = await Promise.all(
      keys.map((k, i) => a.store.complete(k, claimed(claims[i]!)!.token, { outcome: i % 2 ? 'ok' : 'rejected' })),
    );
    expect(a.sent.completes - before.completes, 'complete statements for 32 completes of one turn').toBe(1);
    expect(held).toEqual(keys.map(() => true));
    expect(await a.store.get(keys[0]!)).toMatchObject({ state: 'done', outcome: 'rejected', attempt: 1 });
    expect(await a.store.get(keys[1]!)).toMatchObject({ state: 'done', outcome: 'ok', attempt: 1 });
  });

  it('answers every kind of key in one group as its own statement would: new, repeated, held, done, released', async () => {
    const k = (name: string) => `${run}:${name}`;
    const held = claimed(await a.store.claim(k('held'), 30_000))!;
    const done = claimed(await a.store.claim(k('done'), 30_000))!;
    await a.store.complete(k('done'), done.token);
    const released = claimed(await a.store.claim(k('released'), 30_000))!;
    await a.store.release(k('released'), released.token);

    const before = a.sent.groups;
    const names = ['new', 'new', 'new', 'held', 'done', 'released', 'released', 'other'];
    const r = await Promise.all(names.map((name) => a.store.claim(k(name), 30_000)));
    expect(a.sent.groups - before, 'one grouped statement').toBe(1);
    expect(r.map((c) => c.status)).toEqual([
      'claimed',
      'in-progress',
      'in-progress',
      'in-progress',
      'done',
      'claimed',
      'in-progress',
      'claimed',
    ]);
    // A released key is taken over as a redelivery; a repeat finds the first call's lease.
    expect(r[5]).toMatchObject({ status: 'claimed', attempt: 2 });
    expect((r[1] as { leaseExpiresAt: number }).leaseExpiresAt).toBeGreaterThan(Date.now());
    expect(r[4]).toMatchObject({ status: 'done', outcome: 'ok' });

    // In one group of completes: a token that holds, one that does not, and a repeat of a done one.
    const completes = await Promise.all([
      a.store.complete(k('held'), held.token),
      a.store.complete(k('new'), 'not-the-token'),
      a.store.complete(k('done'), done.token),
    ]);
    expect(completes).toEqual([true, false, true]);
    expect(await a.store.get(k('new'))).toMatchObject({ state: 'claimed' });
  });

  it('gives each key to exactly one of two stores claiming the same new keys in opposite orders, without a deadlock', async () => {
    const before = a.sent.deadlocks + b.sent.deadlocks;
    for (let round = 0; round < 20; round++) {
      const keys = Array.from({ length: 40 }, (_, i) => `${run}:race_${round}_${i}`);
      const [fromA, fromB] = await Promise.all([
        Promise.all(keys.map((key) => a.store.claim(key, 30_000))),
        Promise.all([...keys].reverse().map((key) => b.store.claim(key, 30_000))),
      ]);
      fromB.reverse();
      for (const [i, key] of keys.entries()) {
        const winners = [fromA[i]!, fromB[i]!].filter((c) => c.status === 'claimed');
        expect(winners, key).toHaveLength(1);
      }
    }
    // New keys go in in key order, so two statements over the same keys wait in one direction only.
    expect(a.sent.deadlocks + b.sent.deadlocks, 'statements Postgres ended as deadlocked').toBe(before);
  });

  it('fails every call of a group with the package error naming its own key when the database is unreachable', async () => {
    const down = postgresStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      queryTimeoutMs: 500,
      createTable: false,
      purge: false,
    });
    const settled = await Promise.allSettled([down.claim(`${run}:x`, 1_000), down.claim(`${run}:y`, 1_000)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason.message).toMatch(/^\[@payhook\/store-postgres\] could not claim ".*:x"/);
    expect((settled[1] as PromiseRejectedResult).reason.message).toMatch(/could not claim ".*:y"/);
    await down.close();
  });
});
