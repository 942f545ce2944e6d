import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { postgresStore } from '@payhook/store-postgres';
import { createEvent } from '@payhook/testing';
import { contextFor } from './handler-context.js';
import { statementsSent } from './statements-sent.js';
import { requirePostgres } from '@payhook/test-support/services';

const url = await requirePostgres();

/** A store on a pool of one connection, so that the test's own queries see that connection's prepared statements. */
function oneConnection(table: string, prepare?: boolean) {
  const pool = new pg.Pool({ connectionString: url!, max: 1 });
  const store = postgresStore({ pool, table, purge: false, ...(prepare !== undefined && { prepare }) });
  const prepared = async () =>
    (await pool.query<{ name: string }>(`select name from pg_prepared_statements where name like 'payhook\\_%' order by name`)).rows.map(
      (r) => r.name,
    );
  return { pool, store, prepared };
}

describe.skipIf(!url)('postgres: named statements, parsed and planned once per connection', () => {
  const table = `payhook_prep_${randomUUID().slice(0, 8)}`;
  const effects = `${table}_effects`;
  const made: { pool: pg.Pool; store: { close(): Promise<void> } }[] = [];
  const make = (prepare?: boolean) => {
    const m = oneConnection(table, prepare);
    made.push(m);
    return m;
  };
  const admin = new pg.Pool({ connectionString: url!, max: 1 });
  beforeAll(() => admin.query(`create table if not exists ${effects} (key text primary key)`));
  afterAll(async () => {
    for (const m of made) {
      await m.store.close();
      await m.pool.end();
    }
    await admin.query(`drop table if exists ${table}, ${effects}`);
    await admin.end();
  });

  /** Claim, run a transactional effect, complete: what every delivery of a transactional handler sends. */
  async function deliveries(store: ReturnType<typeof oneConnection>['store'], count: number) {
    const effect = store.transactional(async (_event, ctx, client) => {
      await client.query(store.statement(`insert into ${effects} (key) values ($1)`, [ctx.dedupeKey]));
    });
    for (let i = 0; i < count; i++) {
      const key = `prep-${randomUUID()}`;
      const c = await store.claim(key, 5_000);
      if (c.status !== 'claimed') throw new Error(`expected a claim, got ${c.status}`);
      await effect(createEvent('payment.success'), contextFor(key, c.token));
      expect(await store.complete(key, c.token)).toBe(true);
      const other = `prep-${randomUUID()}`;
      const d = await store.claim(other, 5_000);
      if (d.status !== 'claimed') throw new Error(`expected a claim, got ${d.status}`);
      expect(await store.complete(other, d.token)).toBe(true);
      expect(await store.release(other, d.token)).toBe(false);
    }
  }

  it('names its statements, and the same few whatever the number of deliveries', async () => {
    const { store, prepared } = make();
    await deliveries(store, 3);
    const after3 = await prepared();
    // claim, complete, release, the transaction's done mark and the effect's insert.
    expect(after3.length).toBe(5);
    await deliveries(store, 20);
    expect(await prepared()).toEqual(after3);
  });

  it('sends every statement unnamed with prepare: false', async () => {
    const { store, prepared } = make(false);
    await deliveries(store, 2);
    expect(await prepared()).toEqual([]);
    expect(store.statement('select 1', [])).toEqual({ text: 'select 1', values: [] });
  });

  it('names at most 64 texts, so that SQL with its values inside cannot grow a connection without end', () => {
    const { store } = make();
    const configs = Array.from({ length: 100 }, (_, i) => store.statement(`select ${i}`));
    expect(configs.slice(0, 64).every((c) => typeof c.name === 'string' && c.name.startsWith('payhook_'))).toBe(true);
    expect(new Set(configs.slice(0, 64).map((c) => c.name)).size).toBe(64);
    expect(configs.slice(64).map((c) => c.name)).toEqual(Array(36).fill(undefined));
    // The same text keeps its name.
    expect(store.statement('select 3').name).toBe(configs[3]!.name);
  });
});

describe.skipIf(!url)('postgres: the done record a transaction wrote', () => {
  const table = `payhook_held_${randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: url! });
  const store = postgresStore({ pool, table, purge: false });
  const sent = statementsSent(pool);
  afterAll(async () => {
    await store.close();
    sent.restore();
    await pool.query(`drop table if exists ${table}`);
    await pool.end();
  });
  const effect = store.transactional(async (event) => {
    if (event.merchantReference === 'throw') throw new Error('the effect failed');
  });
  const claim = async (key: string) => {
    const c = await store.claim(key, 5_000);
    if (c.status !== 'claimed') throw new Error(`expected a claim, got ${c.status}`);
    return c.token;
  };

  it('answers the complete that follows its commit without a statement', async () => {
    const key = `held-${randomUUID()}`;
    const token = await claim(key);
    await effect(createEvent('payment.success'), contextFor(key, token));
    sent.texts.length = 0;
    expect(await store.complete(key, token)).toBe(true);
    expect(sent.texts).toEqual([]);
    expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'ok' });
    // Once: a second complete asks the table, which says the same.
    expect(await store.complete(key, token)).toBe(true);
    expect(sent.texts.length).toBe(2);
  });

  it('still sends the complete of a transaction that rolled back, and of a token it never saw', async () => {
    const key = `held-${randomUUID()}`;
    const token = await claim(key);
    await expect(effect(createEvent('payment.success', { merchantReference: 'throw' }), contextFor(key, token))).rejects.toThrow(
      'the effect failed',
    );
    sent.texts.length = 0;
    expect(await store.complete(key, token)).toBe(true);
    expect(sent.texts.length).toBe(1);
    expect(await store.complete(key, randomUUID())).toBe(false);
  });
});
