import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { LedgerEntry } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { requirePostgres } from '@payhook/test-support/services';

const url = await requirePostgres();
const unique = () => randomUUID().replaceAll('-', '').slice(0, 10);

let n = 0;
const entry = (fields: Partial<LedgerEntry> = {}): LedgerEntry => {
  const t = Date.now();
  return {
    id: `${t.toString(36).padStart(11, '0')}-${(n++).toString(36).padStart(4, '0')}-pgacct`,
    receivedAt: t,
    source: 'webhook',
    reference: 'ref_1',
    event: 'payment.success',
    outcome: 'processed',
    status: 200,
    durationMs: 4,
    signature: 'valid',
    ...fields,
  };
};

// The account column (issue 50): generated from the record, added to older tables, and indexed.
describe.skipIf(!url)('postgres ledger: the account column', () => {
  const admin = new pg.Pool({ connectionString: url!, max: 2 });
  const pools: pg.Pool[] = [];
  const smallPool = () => {
    const pool = new pg.Pool({ connectionString: url!, max: 2 });
    pools.push(pool);
    return pool;
  };
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await admin.end();
  });

  it('adds the account column and its index to a ledger table made by an earlier version, from the records it holds', async () => {
    const table = `ledger_oldacct_${unique()}`;
    const old = postgresStore({ pool: smallPool(), table, ledger: true, purge: false });
    try {
      await old.createTable();
      await admin.query(`drop index ${table}_ledger_account_idx; alter table ${table}_ledger drop column account`);
      const [a, none] = [entry({ account: 'A' }), entry()];
      await admin.query(`insert into ${table}_ledger (entry) values ($1::jsonb), ($2::jsonb)`, [JSON.stringify(a), JSON.stringify(none)]);
      const store = postgresStore({ pool: smallPool(), table, ledger: true, purge: false });
      await store.createTable();
      const { rows } = await admin.query<{ account: string | null }>(`select account from ${table}_ledger order by id`);
      expect(rows).toEqual([{ account: 'A' }, { account: null }]);
      const index = await admin.query(`select 1 from pg_indexes where indexname = $1`, [`${table}_ledger_account_idx`]);
      expect(index.rowCount).toBe(1);
      expect(await store.ledger!.list({ account: 'A' })).toEqual([a]);
      await store.close();
    } finally {
      await old.close();
      await admin.query(`drop table if exists ${table}, ${table}_ledger`);
    }
  });

  it('lists one account through its index, not by walking every account’s rows', async () => {
    const table = `ledger_acctidx_${unique()}`;
    const pool = smallPool();
    const store = postgresStore({ pool, table, ledger: { maxEntries: 100_000 }, purge: false });
    try {
      for (let b = 0; b < 20; b++) {
        await store.ledger!.append(Array.from({ length: 250 }, (_, i) => entry({ account: `acct_${i % 50}` })));
      }
      await admin.query(`analyze ${table}_ledger`);
      // The statement the store sends, explained with its own values.
      const sent: { text: string; values: unknown[] }[] = [];
      const query = pool.query;
      pool.query = ((config: { text: string; values: unknown[] }, ...rest: unknown[]) => {
        sent.push(config);
        return (query as (...args: unknown[]) => unknown).call(pool, config, ...rest);
      }) as typeof pool.query;
      const page = await store.ledger!.list({ account: 'acct_7', limit: 20 });
      pool.query = query;
      expect(page).toHaveLength(20);
      expect(page.every((e) => e.account === 'acct_7')).toBe(true);
      const { text, values } = sent.at(-1)!;
      const plan = await admin.query<{ 'QUERY PLAN': string }>(`explain ${text}`, values);
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain(`${table}_ledger_account_idx`);
    } finally {
      await store.close();
      await admin.query(`drop table if exists ${table}, ${table}_ledger`);
    }
  });
});
