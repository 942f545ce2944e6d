import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { createReceiver, type DeliveryReport } from '@payhook/core';
import { postgresStore, schemaSql } from '@payhook/store-postgres';
import { createEvent, signedRequest } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';
import { contextFor } from './handler-context.js';
import { statementsSent } from './statements-sent.js';
import { requirePostgres } from '@payhook/test-support/services';
import { sleep, until } from '@payhook/test-support/wait';

const url = await requirePostgres();
// Only for Postgres's own clock: leases and retention are timed by the server (clock_timestamp()),
// which is the thing under test and which a test cannot move.

describe.skipIf(!url)('postgres', () => {
  storeConformance('postgres', { make: () => postgresStore({ connectionString: url! }), shared: true });

  describe('postgres store specifics', () => {
    const pool = new pg.Pool({ connectionString: url! });
    const table = `payhook_test_${randomUUID().slice(0, 8)}`;
    const store = postgresStore({ pool, table });
    const effects = `${table}_effects`;
    const effectCount = async (key: string) =>
      (await pool.query<{ n: number }>(`select count(*)::int as n from ${effects} where key = $1`, [key])).rows[0]!.n;
    const claim = async (key: string, leaseMs = 5_000) => {
      const c = await store.claim(key, leaseMs);
      if (c.status !== 'claimed') throw new Error(`expected a claim, got ${c.status}`);
      return c.token;
    };
    const insertEffect = store.transactional(async (event, ctx, client) => {
      await client.query(`insert into ${effects} (key) values ($1)`, [ctx.dedupeKey]);
      if (event.merchantReference === 'throw') throw new Error('the effect failed');
    });

    afterAll(async () => {
      await store.close();
      // A pool you pass stays yours: close() left it open.
      await pool.query(`drop table if exists ${table}, ${effects}`);
      await pool.end();
    });

    it('creates its table before first use, and ships the same schema as schema.sql', async () => {
      await store.createTable();
      await pool.query(`create table ${effects} (key text not null)`);
      const { rows } = await pool.query(`select relpersistence from pg_class where relname = $1`, [table]);
      expect(rows).toEqual([{ relpersistence: 'p' }]); // a logged table
      const shipped = readFileSync(new URL('../schema.sql', import.meta.url), 'utf8');
      expect(shipped).toBe(schemaSql());
    });

    it('creates the table once when several processes start together', async () => {
      const fresh = `payhook_test_${randomUUID().slice(0, 8)}`;
      const stores = Array.from({ length: 8 }, () => postgresStore({ connectionString: url!, table: fresh }));
      try {
        const results = await Promise.all(stores.map((s, i) => s.claim(`k${i}`, 5_000)));
        expect(results.every((r) => r.status === 'claimed')).toBe(true);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await pool.query(`drop table if exists ${fresh}`);
      }
    });

    it("holds a claim whose lease outlasts the retention to its end, alone, grouped or extended (on the server's clock)", async () => {
      const short = postgresStore({ pool, table, retentionMs: 200 });
      const [alone, a, b, extended] = ['alone', 'a', 'b', 'extended'].map((k) => `lease-${k}-${randomUUID()}`) as [
        string,
        string,
        string,
        string,
      ];
      const claims = [await short.claim(alone, 1_500), ...(await Promise.all([short.claim(a, 1_500), short.claim(b, 1_500)]))];
      const e = await short.claim(extended, 100);
      if (claims.some((c) => c.status !== 'claimed') || e.status !== 'claimed') throw new Error('expected four claims');
      expect(await short.extend(extended, e.token, 1_500)).toBe(true);
      await sleep(400); // real wait: past the 200 ms retention on Postgres's clock, within the 1.5 s leases
      for (const key of [alone, a, b, extended]) expect(await short.claim(key, 5_000), key).toMatchObject({ status: 'in-progress' });
      expect(await short.get(alone)).toMatchObject({ state: 'claimed', attempt: 1 });
      expect(await short.get(extended)).toMatchObject({ state: 'claimed', attempt: 1 });
      await short.close();
    });

    it('commits the effect and the done record together, and the later complete says yes', async () => {
      const key = `tx-${randomUUID()}`;
      const token = await claim(key);
      await insertEffect(createEvent('payment.success'), contextFor(key, token));
      expect(await effectCount(key)).toBe(1);
      expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'ok', attempt: 1 });
      expect(await store.complete(key, token)).toBe(true);
      expect(await store.complete(key, randomUUID())).toBe(false);
      expect((await store.claim(key, 5_000)).status).toBe('done');
    });

    it('rolls back both when the effect throws, leaving the claim for a release', async () => {
      const key = `tx-${randomUUID()}`;
      const token = await claim(key);
      await expect(insertEffect(createEvent('payment.success', { merchantReference: 'throw' }), contextFor(key, token))).rejects.toThrow(
        'the effect failed',
      );
      expect(await effectCount(key)).toBe(0);
      expect(await store.get(key)).toMatchObject({ state: 'claimed', attempt: 1 });
      expect(await store.release(key, token)).toBe(true);
      expect(await store.claim(key, 5_000)).toMatchObject({ status: 'claimed', attempt: 2 });
    });

    it('does not run the effect for a token that lost its claim', async () => {
      const key = `tx-${randomUUID()}`;
      const old = await claim(key, 100);
      await sleep(200); // real wait: the 100 ms lease lapses on Postgres's clock
      const next = await claim(key);
      await expect(insertEffect(createEvent('payment.success'), contextFor(key, old))).rejects.toThrow(
        /^\[@payhook\/store-postgres\] the claim on .* is no longer held/,
      );
      expect(await effectCount(key)).toBe(0);
      await insertEffect(createEvent('payment.success'), contextFor(key, next));
      expect(await effectCount(key)).toBe(1);
    });

    it('runs a transactional handler in the receiver with no error reported', async () => {
      const errors: DeliveryReport[] = [];
      const receiver = createReceiver({ secret: 's', store, logger: { error: (r: DeliveryReport) => errors.push(r) } }).on(
        'payment.success',
        insertEffect,
      );
      const event = createEvent('payment.success');
      const key = `${event.mode}:${event.reference}:${event.event}`;
      expect((await receiver.handle(signedRequest(event, { secret: 's' }))).status).toBe(200);
      expect(await (await receiver.handle(signedRequest(event, { secret: 's' }))).json()).toEqual({ outcome: 'duplicate' });
      expect(errors).toEqual([]);
      expect(await effectCount(key)).toBe(1);
    });

    it('treats rows past their retention as absent, and purges them', async () => {
      const short = postgresStore({ pool, table, retentionMs: 100 });
      const gone = `purge-${randomUUID()}`;
      const kept = `purge-${randomUUID()}`;
      await short.complete(gone, await claim(gone), { ttlMs: 100 });
      await store.complete(kept, await claim(kept));
      await sleep(200); // real wait: the 100 ms retention runs out on Postgres's clock
      expect(await store.get(gone)).toBeUndefined();
      expect(await store.get(kept)).toMatchObject({ state: 'done' });
      expect(await store.purgeExpired({ batchSize: 1 })).toBeGreaterThanOrEqual(1);
      const { rows } = await pool.query(`select key from ${table} where key = any($1)`, [[gone, kept]]);
      expect(rows).toEqual([{ key: kept }]);
    });

    it('uses one round trip per claim and one per complete', async () => {
      const sent = statementsSent(pool);
      try {
        const key = `rt-${randomUUID()}`;
        const token = await claim(key);
        expect(sent.texts.length).toBe(1);
        sent.texts.length = 0;
        expect(await store.complete(key, token)).toBe(true);
        expect(sent.texts.length).toBe(1);
      } finally {
        sent.restore();
      }
    });

    it('says what to do when the table is missing or the name is wrong', async () => {
      // A name no other run uses: a mutation run's broken store may create the tables it is given.
      const missing = postgresStore({ pool, table: `payhook_test_missing_${randomUUID().slice(0, 8)}`, createTable: false });
      await expect(missing.claim('k', 5_000)).rejects.toThrow(
        /^\[@payhook\/store-postgres\] .*does not exist: create it from the package's schema\.sql/,
      );
      expect(() => postgresStore({ pool, table: 'x; drop table y' })).toThrow(/table must be a plain identifier/);
      expect(() => postgresStore({})).toThrow(/pass `connectionString`/);
    });

    it('fails fast with a clear error when Postgres cannot be reached', async () => {
      const down = postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
      const started = Date.now();
      await expect(down.claim('k', 5_000)).rejects.toThrow(/^\[@payhook\/store-postgres\] could not .*DATABASE_URL/);
      expect(Date.now() - started).toBeLessThan(2_500);
      await down.close();
    });

    it('survives the connection of a transaction being killed: the delivery fails, the process and the pool go on', async () => {
      const key = `killed_${randomUUID()}`;
      const token = await claim(key);
      let backend = 0;
      let held: pg.PoolClient | undefined;
      const removed: unknown[] = [];
      pool.on('remove', (client) => removed.push(client));
      const slow = store.transactional(async (_event, _ctx, client) => {
        held = client;
        backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
        await client.query('select pg_sleep(10)');
      });
      // Caught at once: it fails as soon as the backend goes, before the assertions below look.
      const running = Promise.resolve(slow(createEvent('payment.success'), contextFor(key, token))).then(
        () => undefined,
        (error: Error) => error,
      );
      await until(() => backend !== 0, { what: "the server to run the effect's first query" });
      await pool.query('select pg_terminate_backend($1)', [backend]);
      // Without an 'error' listener on the checked-out client this was an uncaught error: the process ended.
      expect((await running)?.message).toMatch(
        /^\[@payhook\/store-postgres\] the connection to PostgreSQL broke during a transaction \(terminating connection/,
      );
      // The broken client was discarded, not handed back to the pool.
      expect(removed).toContain(held);
      // The claim is still held (the receiver releases it on the failure); the next transaction works.
      const next = `after_${randomUUID()}`;
      await insertEffect(createEvent('payment.success'), contextFor(next, await claim(next)));
      expect(await effectCount(next)).toBe(1);
    });

    it('listens for idle connection errors on a pool you pass that has no listener, and leaves one that has', () => {
      const bare = new pg.Pool({ connectionString: url! });
      postgresStore({ pool: bare, table });
      expect(bare.listenerCount('error')).toBe(1);
      const heard = new pg.Pool({ connectionString: url! });
      const mine = () => {};
      heard.on('error', mine);
      postgresStore({ pool: heard, table });
      expect(heard.listeners('error')).toEqual([mine]);
      return Promise.all([bare.end(), heard.end()]);
    });

    it('warns once when the server acknowledges commits before they are durable, unless told not to', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const lax = () => new pg.Pool({ connectionString: url!, options: '-c synchronous_commit=off' });
      const pools = [lax(), lax(), new pg.Pool({ connectionString: url! })];
      // The check is a query of its own, sent beside a store's first one (on another connection) and not awaited by it.
      const checks = pools.map((p) => vi.spyOn(p, 'query'));
      try {
        const stores = [
          postgresStore({ pool: pools[0], table }),
          postgresStore({ pool: pools[1], table, checkDurability: false }),
          postgresStore({ pool: pools[2], table }),
        ];
        for (const st of stores) for (let i = 0; i < 3; i++) await st.get(`durability_${i}`);
        // Every store but the silenced one checked, once; a second warning could only come from one of these checks.
        const asked = checks.map((c) =>
          c.mock.calls.flatMap(([query], i) => (query === 'SHOW synchronous_commit' ? [c.mock.results[i]!.value as unknown] : [])),
        );
        expect(asked.map((a) => a.length)).toEqual([1, 0, 1]);
        // Wait for each check's answer: the warning, if any, is printed before anything awaiting the same answer goes on.
        await Promise.allSettled(asked.flat());
        const said = warn.mock.calls.map((c) => String(c[0]));
        expect(said).toHaveLength(1);
        expect(said[0]).toMatch(/^\[@payhook\/store-postgres\] the database runs with synchronous_commit=off/);
      } finally {
        warn.mockRestore();
        await Promise.all(pools.map((p) => p.end()));
      }
    });

    it('sends its own lines to the logger of the receiver built on it, not the console', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const pool = new pg.Pool({ connectionString: url!, options: '-c synchronous_commit=off' });
      const store = postgresStore({ pool, table });
      const lines: { level: string; message: string }[] = [];
      const receiver = createReceiver({
        secret: 'whsec_pg_log',
        store,
        logger: (level, _fields, message) => void lines.push({ level, message }),
      });
      receiver.on('payment.success', () => {});
      try {
        expect((await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_pg_log' }))).status).toBe(200);
        // Real wait: the durability check is a query of its own that the first claim does not await.
        await until(() => lines.some((l) => /synchronous_commit=off/.test(l.message)), {
          what: "the store's warning in the receiver's logger",
        });
        expect(lines.filter((l) => l.message.startsWith('[@payhook/store-postgres] ')).map((l) => l.level)).toEqual(['warn']);
        expect(warn.mock.calls.filter((c) => String(c[0]).startsWith('[@payhook/store-postgres]'))).toEqual([]);
      } finally {
        warn.mockRestore();
        await store.close();
        await pool.end();
      }
    });
  });
});
