import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import type { Clock } from '@payhook/core';
import { postgresStore, schemaSql, type PostgresStore } from '@payhook/store-postgres';
import { requirePostgres } from '@payhook/test-support/services';

const url = await requirePostgres();
const HOUR = 60 * 60 * 1000;

/**
 * A clock whose timers run only when the test fires them: `fire()` runs the one pending timer as
 * if its time had come, and waits for the purge run it starts (the store's timer callback returns it).
 */
function fakeClock() {
  const timers = new Set<{ run: () => unknown; ms: number }>();
  const clock: Clock = {
    now: () => Date.now(),
    setTimeout(run, ms) {
      const timer = { run, ms };
      timers.add(timer);
      return timer;
    },
    clearTimeout: (handle) => void timers.delete(handle as never),
  };
  const next = () => {
    expect(timers.size).toBe(1);
    return [...timers][0]!;
  };
  return {
    clock,
    timers,
    next,
    start: () => {
      const timer = next();
      timers.delete(timer);
      return Promise.resolve(timer.run());
    },
    async fire() {
      await this.start();
    },
  };
}

/** The purge statements `pool` sends: their row limit, and what they answered. */
function watchPurges(pool: pg.Pool) {
  const sent: { limit: number; got?: boolean; deleted?: number }[] = [];
  const query = pool.query.bind(pool) as (config: unknown) => Promise<pg.QueryResult>;
  pool.query = (async (config: { text?: string; values?: unknown[] }) => {
    if (!config.text?.includes('gone AS')) return query(config);
    const entry: (typeof sent)[number] = { limit: Number(config.values?.[0]) };
    sent.push(entry);
    const result = await query(config);
    Object.assign(entry, result.rows[0]);
    return result;
  }) as unknown as typeof pool.query;
  return sent;
}

describe.skipIf(!url)('postgres store: the periodic purge', () => {
  const pool = new pg.Pool({ connectionString: url!, max: 3 });
  const tables: string[] = [];
  const stores: PostgresStore[] = [];
  const newTable = () => {
    const table = `payhook_purge_${randomUUID().slice(0, 8)}`;
    tables.push(table);
    return table;
  };
  const track = (store: PostgresStore) => (stores.push(store), store);
  /** `n` done rows, past their retention or not, written straight into the table. */
  const seed = (table: string, n: number, expired: boolean) =>
    pool.query(
      `insert into ${table} (key, state, attempt, outcome, completed_at, expires_at)
       select $2 || i, 'done', 1, 'ok', now(), now() + $3 * interval '1 day' from generate_series(1, $1::int) i`,
      [n, `${expired ? 'old' : 'live'}-${randomUUID()}-`, expired ? -1 : 1],
    );
  const count = async (table: string) =>
    (
      await pool.query<{ expired: number; live: number }>(
        `select count(*) filter (where expires_at <= now())::int as expired, count(*) filter (where expires_at > now())::int as live from ${table}`,
      )
    ).rows[0]!;

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    if (tables.length) await pool.query(`drop table if exists ${tables.join(', ')}`);
    await pool.end();
  });

  it('is on by default: from the first use, a run after a random part of an hour deletes the expired rows and keeps the rest, then every hour', async () => {
    const table = newTable();
    const time = fakeClock();
    const store = track(postgresStore({ pool, table, clock: time.clock }));
    expect(time.timers.size).toBe(0); // created, not used: no timer yet
    await store.createTable();
    const first = time.next().ms;
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(HOUR);
    await seed(table, 25, true);
    await seed(table, 5, false);
    const key = `kept-${randomUUID()}`;
    const claim = await store.claim(key, 5_000);
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    await store.complete(key, claim.token);

    await time.fire();
    expect(await count(table)).toEqual({ expired: 0, live: 6 });
    expect(await store.get(key)).toMatchObject({ state: 'done' });
    expect(time.next().ms).toBe(HOUR);
    await seed(table, 3, true);
    await time.fire();
    expect(await count(table)).toEqual({ expired: 0, live: 6 });
  });

  it('deletes at most maxRowsPerRun a run, in batches of batchSize; the next run goes on', async () => {
    const table = newTable();
    const own = new pg.Pool({ connectionString: url!, max: 1 });
    const sent = watchPurges(own);
    const time = fakeClock();
    track(postgresStore({ pool: own, table, clock: time.clock, purge: { batchSize: 10, maxRowsPerRun: 25 } }));
    try {
      await stores[0]!.createTable();
      await seed(table, 40, true);
      await time.fire();
      expect(await count(table)).toEqual({ expired: 15, live: 0 });
      expect(sent).toEqual([
        { limit: 10, got: true, deleted: 10 },
        { limit: 10, got: true, deleted: 10 },
        { limit: 5, got: true, deleted: 5 },
      ]);
      sent.length = 0;
      await time.fire();
      expect(await count(table)).toEqual({ expired: 0, live: 0 });
      expect(sent).toEqual([
        { limit: 10, got: true, deleted: 10 },
        { limit: 10, got: true, deleted: 5 },
      ]);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      await own.end();
    }
  });

  it('runs one process at a time: a run that finds the purge lock taken deletes nothing, and two at once fail nothing', async () => {
    const table = newTable();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const [a, b] = [fakeClock(), fakeClock()];
    const pools = [new pg.Pool({ connectionString: url!, max: 1 }), new pg.Pool({ connectionString: url!, max: 1 })];
    const sent = pools.map(watchPurges);
    const batches = { batchSize: 50, maxRowsPerRun: 100_000 };
    const [storeA, storeB] = [
      track(postgresStore({ pool: pools[0], table, clock: a.clock, purge: batches })),
      track(postgresStore({ pool: pools[1], table, clock: b.clock, purge: batches })),
    ];
    const holder = await pool.connect();
    try {
      await storeA.createTable();
      await storeB.get('k');
      await seed(table, 20, true);
      // Another process in the middle of a batch: it holds the table's purge lock.
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(hashtext($1))', [`@payhook/store-postgres:purge:${table}`]);
      await a.fire();
      expect(sent[0]).toEqual([{ limit: 50, got: false, deleted: 0 }]); // the run ended at once
      expect(await count(table)).toEqual({ expired: 20, live: 0 });
      await holder.query('commit');
      await a.fire();
      expect(await count(table)).toEqual({ expired: 0, live: 0 });

      await seed(table, 2_000, true);
      await seed(table, 10, false);
      for (const s of sent) s.length = 0;
      await Promise.all([a.fire(), b.fire()]);
      expect(await count(table)).toEqual({ expired: 0, live: 10 });
      const deleted = sent.flat().reduce((n, s) => n + (s.deleted ?? 0), 0);
      expect(deleted).toBe(2_000); // each row once, whichever process deleted it
      // Each run ended at the first batch that found the lock taken.
      for (const s of sent) for (let i = 0; i < s.length - 1; i++) expect(s[i]!.got).toBe(true);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      holder.release();
      await Promise.all(stores.splice(0).map((s) => s.close()));
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('never runs with purge: false, and purgeExpired() is there for your own schedule', async () => {
    const table = newTable();
    const time = fakeClock();
    const store = track(postgresStore({ pool, table, clock: time.clock, purge: false }));
    await store.createTable();
    await store.get('k');
    expect(time.timers.size).toBe(0);
    await seed(table, 12, true);
    await seed(table, 2, false);
    expect(await count(table)).toEqual({ expired: 12, live: 2 });
    expect(await store.purgeExpired({ batchSize: 5 })).toBe(12);
    expect(await count(table)).toEqual({ expired: 0, live: 2 });
  });

  it('stops on close(): no run after it, and close() waits for the batch under way', async () => {
    const table = newTable();
    const time = fakeClock();
    const store = postgresStore({ connectionString: url!, table, clock: time.clock, purge: { batchSize: 100 } });
    await store.createTable();
    await seed(table, 1_000, true);
    const running = time.start();
    let settled = false;
    void running.then(() => (settled = true));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    // The store ends its own pool: had close() not waited, the run would fail on an ended pool.
    await store.close();
    expect(settled).toBe(true);
    expect(time.timers.size).toBe(0); // and no next run is set
    expect(await count(table)).toEqual({ expired: 900, live: 0 }); // it stopped after the batch under way
    expect(errors).not.toHaveBeenCalled();

    // A store closed before any run: its timer is cleared.
    const idle = fakeClock();
    const other = postgresStore({ pool, table, clock: idle.clock });
    await other.get('k');
    expect(idle.timers.size).toBe(1);
    await other.close();
    expect(idle.timers.size).toBe(0);
  });

  it('never keeps the process alive: a process that used the store exits on its own, its purge timer set', async () => {
    const table = newTable();
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const file = fileURLToPath(new URL('./children/purge-exit.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      env: { ...process.env, PURGE_URL: url!, PURGE_TABLE: table },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const started = Date.now();
    const code = await new Promise<number | string | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running after 15 s');
      }, 15_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code, err).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Purged every 200 ms during its 1 s of work: the timer was set, and did not hold it.
    expect(Number(/PURGES (\d+)/.exec(out)?.[1])).toBeGreaterThanOrEqual(2);
  });

  it('logs a failing run once until one succeeds, never throws, and the next run works', async () => {
    const table = newTable();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const time = fakeClock();
    const store = track(postgresStore({ pool, table, clock: time.clock }));
    await store.createTable();
    await pool.query(`drop table ${table}`);
    await time.fire();
    await time.fire();
    expect(errors).toHaveBeenCalledTimes(1);
    expect(String(errors.mock.calls[0]![0])).toMatch(
      new RegExp(
        `^\\[@payhook/store-postgres\\] the periodic purge could not delete the expired rows of ${table} \\(.*does not exist\\)\\. Deliveries are not affected; it tries again in 60 min\\. The table ${table} does not exist: create it from the package's schema\\.sql`,
      ),
    );
    await pool.query(schemaSql(table, { ledger: false }));
    await seed(table, 7, true);
    await time.fire();
    expect(await count(table)).toEqual({ expired: 0, live: 0 });
    expect(errors).toHaveBeenCalledTimes(1);
    // A new streak is logged again.
    await pool.query(`drop table ${table}`);
    await time.fire();
    expect(errors).toHaveBeenCalledTimes(2);
    await pool.query(schemaSql(table, { ledger: false }));

    // A database that cannot be reached: logged, not thrown.
    const down = fakeClock();
    const unreachable = track(postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', clock: down.clock }));
    await expect(unreachable.get('k')).rejects.toThrow(/^\[@payhook\/store-postgres\] could not /);
    await down.fire();
    expect(errors).toHaveBeenCalledTimes(3);
    expect(String(errors.mock.calls[2]![0])).toMatch(
      /^\[@payhook\/store-postgres\] the periodic purge could not delete the expired rows of payhook_deliveries \(.*ECONNREFUSED.*\)\. Deliveries are not affected; it tries again in 60 min\. Check that Postgres is running and reachable/,
    );
    expect(down.timers.size).toBe(1); // and the next run is set
  });

  it('says what to fix in a bad purge option', () => {
    expect(() => postgresStore({ pool, purge: { everyMs: 0 } })).toThrow(
      /^\[@payhook\/store-postgres\] purge\.everyMs must be a positive number of milliseconds; got 0\./,
    );
    expect(() => postgresStore({ pool, purge: { batchSize: -1 } })).toThrow(/purge\.batchSize must be a positive number of rows/);
    expect(() => postgresStore({ pool, purge: { everyMs: 30 * 24 * HOUR } })).toThrow(/purge\.everyMs must be at most 2147483647 ms/);
  });
});
