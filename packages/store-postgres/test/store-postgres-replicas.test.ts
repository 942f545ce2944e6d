import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Log } from '@payhook/core/store';
import { postgresStore } from '@payhook/store-postgres';
import { channelOf } from '../src/listener.js';
import { query, startPostgresReplicated, standbyBinaries, type ReplicatedPostgres } from '@payhook/test-support/servers/postgres-standby';
import { until } from '@payhook/test-support/wait';

/**
 * The store beside a real streaming standby: the start-up check of replication (asynchronous,
 * synchronous, a named standby that is not there) and a promoted standby noticed on the next
 * connection. The failover under load, counting effects, is test/faults/postgres-failover.test.ts.
 */
const installed = standbyBinaries() !== undefined;

function capture() {
  const lines: { level: string; message: string; fields: { since?: string; until?: string } }[] = [];
  const log: Log = { enabled: () => true, write: (level, fields, message) => void lines.push({ level, message, fields }) };
  return { lines, log };
}

describe.skipIf(!installed)('postgres store beside a standby', () => {
  let pair: ReplicatedPostgres;
  beforeAll(async () => {
    pair = (await startPostgresReplicated({ lagMs: 0, synchronous: false }))!;
  }, 60_000);
  afterAll(() => pair?.stop());

  /** A store's start-up check, and what it logged once it has run (the check goes out on the first use). */
  async function checked(table: string, listen = false) {
    const { lines, log } = capture();
    const store = postgresStore({ connectionString: pair.primaryUrl, table, purge: false, listen });
    store.useLogger?.(log);
    try {
      await store.claim('k', 1_000);
      // The check's two queries follow the first statement; a few more round trips see them answered.
      for (let i = 0; i < 5; i++) await store.get('k');
      return lines;
    } finally {
      await store.close();
    }
  }
  const setStandbys = (names: string) =>
    query(pair.primaryUrl, async (c) => {
      await c.query(`alter system set synchronous_standby_names = '${names}'`);
      await c.query('select pg_reload_conf()');
    });

  it('warns once about an asynchronous standby, naming synchronous_standby_names', async () => {
    const lines = await checked('rep_async');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('warn');
    expect(lines[0]!.message).toMatch(/^\[@payhook\/store-postgres\] PostgreSQL has 1 asynchronous standby\(s\)/);
    expect(lines[0]!.message).toContain('synchronous_standby_names');
  });

  it('once the standby is synchronous: silent with listen: false, and a warning about NOTIFY with it on', async () => {
    await setStandbys('*');
    await until(
      () =>
        query(pair.primaryUrl, async (c) => (await c.query("select 1 from pg_stat_replication where sync_state = 'sync'")).rowCount === 1),
      { what: 'the standby synchronous' },
    );
    expect(await checked('rep_sync', false)).toEqual([]);
    const listening = await checked('rep_sync_listen', true);
    expect(listening).toHaveLength(1);
    expect(listening[0]!.message).toMatch(
      /waits for a synchronous standby, and the store tells waiting copies with NOTIFY.*Pass listen: false/,
    );
  });

  it('with listen: false a claim that ends tells nobody (no NOTIFY, whose lock makes commits take turns)', async () => {
    const listener = new pg.Client({ connectionString: pair.primaryUrl });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (n) => told.push(String(n.payload)));
    const quiet = postgresStore({
      connectionString: pair.primaryUrl,
      table: 'rep_told',
      purge: false,
      listen: false,
      checkDurability: false,
    });
    const telling = postgresStore({ connectionString: pair.primaryUrl, table: 'rep_told', purge: false, checkDurability: false });
    try {
      await listener.query(`listen "${channelOf('rep_told')}"`);
      for (const [store, key] of [
        [quiet, 'quiet'],
        [telling, 'telling'],
      ] as const) {
        const claim = await store.claim(key, 10_000);
        if (claim.status === 'claimed') await store.complete(key, claim.token);
      }
      // Notifications come in commit order: once the second is here, the first would have been.
      await until(() => told.length > 0, { what: "the telling store's NOTIFY" });
      expect(told).toEqual(['telling']);
    } finally {
      await Promise.all([quiet.close(), telling.close(), listener.end()]);
    }
  });

  it('an error when the standby it names is not connected (every commit would wait)', async () => {
    // The store's own commits now wait for ever (to the query timeout): the check still speaks.
    await setStandbys('nobody_here');
    const { lines, log } = capture();
    const store = postgresStore({
      connectionString: pair.primaryUrl,
      table: 'rep_missing',
      purge: false,
      listen: false,
      queryTimeoutMs: 500,
    });
    store.useLogger?.(log);
    try {
      await store.claim('k', 1_000).catch(() => {});
      await until(() => lines.length > 0, { what: 'the start-up check' });
      expect(lines[0]!.level).toBe('error');
      expect(lines[0]!.message).toContain("synchronous_standby_names is 'nobody_here' and no standby it names is connected");
    } finally {
      await store.close();
      await setStandbys('');
    }
  });

  it('notices the promoted standby on its next connection, and logs at error the window to reconcile', async () => {
    const { lines, log } = capture();
    const store = postgresStore({ connectionString: pair.url, table: 'rep_switch', purge: false, listen: false, checkDurability: false });
    store.useLogger?.(log);
    try {
      await store.claim('before', 10_000);
      expect(lines).toEqual([]);
      await pair.failover();
      await until(
        () =>
          store.claim('after', 10_000).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 15_000, what: 'a claim on the promoted standby' },
      );
      await until(() => lines.some((l) => /different primary/.test(l.message)), { what: 'the switch logged' });
      const logged = lines.find((l) => /different primary/.test(l.message))!;
      expect(logged.level).toBe('error');
      expect(logged.message).toMatch(/timeline 1 → 2: a standby promoted/);
      expect(logged.message).toMatch(/payhook reconcile --since \d{4}-\d\d-\d\dT\S+Z --until \d{4}-\d\d-\d\dT\S+Z/);
      expect(Date.parse(logged.fields.until!) - Date.parse(logged.fields.since!)).toBeGreaterThanOrEqual(5 * 60_000);
    } finally {
      await store.close();
    }
  }, 60_000);
});
