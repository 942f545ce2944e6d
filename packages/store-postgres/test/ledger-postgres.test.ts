import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Clock, LedgerEntry } from '@payhook/core';
import type { LedgerOptions } from '@payhook/core/store';
import { postgresStore, schemaSql } from '@payhook/store-postgres';
import { ledgerConformance } from '@payhook/testing/ledger';
import { requirePostgres } from '@payhook/test-support/services';

const url = await requirePostgres();
const unique = () => randomUUID().replaceAll('-', '').slice(0, 10);

describe.skipIf(!url)('postgres ledger', () => {
  // Small pools: the database serves other suites at the same time.
  const admin = new pg.Pool({ connectionString: url!, max: 2 });
  const pools: pg.Pool[] = [];
  const smallPool = (extra: pg.PoolConfig = {}) => {
    const pool = new pg.Pool({ connectionString: url!, max: 2, ...extra });
    pools.push(pool);
    return pool;
  };
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await admin.end();
  });
  const rowCount = async (table: string) => (await admin.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0]!.n;
  const tableExists = async (schema: string, name: string) =>
    (await admin.query(`select 1 from pg_tables where schemaname = $1 and tablename = $2`, [schema, name])).rowCount === 1;

  ledgerConformance('postgres', {
    make: async (bounds) => {
      const table = `ledger_test_${unique()}`;
      const pool = smallPool();
      const store = postgresStore({ pool, table, ledger: bounds });
      return {
        ledger: store.ledger!,
        close: async () => {
          await admin.query(`drop table if exists ${table}, ${table}_ledger`);
          await store.close();
        },
      };
    },
  });

  let n = 0;
  const entry = (fields: Partial<LedgerEntry> = {}): LedgerEntry => {
    const t = Date.now();
    return {
      id: `${t.toString(36).padStart(11, '0')}-${(n++).toString(36).padStart(4, '0')}-pgtest`,
      receivedAt: t,
      source: 'webhook',
      reference: 'ref_1',
      event: 'payment.success',
      outcome: 'processed',
      status: 200,
      durationMs: 4,
      signature: 'valid',
      body: '{"event":"payment.success"}',
      bodyEncoding: 'utf8',
      ...fields,
    };
  };

  describe('postgres ledger specifics', () => {
    it('names its table <table>_ledger, by default payhook_deliveries_ledger, and creates it with the store table', async () => {
      expect(schemaSql()).toContain('CREATE TABLE IF NOT EXISTS "payhook_deliveries_ledger"');
      // The default name, in a schema of its own (by search_path) so as not to touch the shared database's tables.
      const schema = `ledger_default_${unique()}`;
      await admin.query(`create schema ${schema}`);
      const store = postgresStore({ pool: smallPool({ options: `-c search_path=${schema}` }), ledger: true });
      try {
        expect(store.ledger?.body).toBe('keep');
        await store.createTable();
        expect(await tableExists(schema, 'payhook_deliveries')).toBe(true);
        expect(await tableExists(schema, 'payhook_deliveries_ledger')).toBe(true);
        const e = entry();
        await store.ledger!.append([e]);
        expect(await rowCount(`${schema}.payhook_deliveries_ledger`)).toBe(1);
      } finally {
        await store.close();
        await admin.query(`drop schema ${schema} cascade`);
      }
    });

    it('keeps a schema-qualified table in its schema', async () => {
      const schema = `ledger_schema_${unique()}`;
      await admin.query(`create schema ${schema}`);
      const store = postgresStore({ pool: smallPool(), table: `${schema}.deliveries`, ledger: { body: 'hash', maxEntries: 10 } });
      try {
        expect(store.ledger!.body).toBe('hash');
        const e = entry({ body: undefined, bodyEncoding: undefined, bodySha256: 'ab'.repeat(32) });
        delete e.body;
        delete e.bodyEncoding;
        await store.ledger!.append([e]);
        expect(await store.ledger!.get(e.id)).toEqual(e);
        expect(await tableExists(schema, 'deliveries_ledger')).toBe(true);
        expect(await rowCount(`${schema}.deliveries_ledger`)).toBe(1);
      } finally {
        await store.close();
        await admin.query(`drop schema ${schema} cascade`);
      }
    });

    it('refuses bad ledger options with a message that names the package and the fix', () => {
      const make = (ledger: Record<string, unknown>, table?: string) => () =>
        postgresStore({ pool: smallPool(), ledger: ledger as LedgerOptions, ...(table && { table }) });
      expect(make({ maxEntries: 0 })).toThrow(
        /^\[@payhook\/store-postgres\] ledger\.maxEntries must be a positive whole number; got 0\. Leave it unset for 100000\./,
      );
      expect(make({ maxEntries: 1.5 })).toThrow(RangeError);
      expect(make({ retentionMs: -1 })).toThrow(/^\[@payhook\/store-postgres\] ledger\.retentionMs must be a positive number/);
      expect(make({ body: 'raw' })).toThrow(/^\[@payhook\/store-postgres\] ledger\.body must be 'keep' or 'hash'; got raw/);
      expect(make({ maxRefusals: 0 })).toThrow(
        /^\[@payhook\/store-postgres\] ledger\.maxRefusals must be a positive whole number; got 0\. Leave it unset for 10000\./,
      );
      expect(make({ deadLetterRetentionMs: Number.NaN })).toThrow(
        /^\[@payhook\/store-postgres\] ledger\.deadLetterRetentionMs must be a positive number of milliseconds/,
      );
      // The ledger's table adds _ledger to the name, which must still fit Postgres's 63 characters.
      expect(make({}, 'x'.repeat(57))).toThrow(/^\[@payhook\/store-postgres\] the ledger's table .* at most 56/);
      expect(make({}, 'x'.repeat(56))).not.toThrow();
      expect(() => postgresStore({ pool: smallPool(), table: 'x'.repeat(63) })).not.toThrow();
    });

    it('has no ledger, and creates no ledger table, without the option', async () => {
      const table = `ledger_none_${unique()}`;
      const store = postgresStore({ pool: smallPool(), table });
      try {
        expect(store.ledger).toBeUndefined();
        expect('ledger' in store).toBe(false);
        await store.createTable();
        expect(await tableExists('public', table)).toBe(true);
        expect(await tableExists('public', `${table}_ledger`)).toBe(false);
      } finally {
        await admin.query(`drop table if exists ${table}`);
        await store.close();
      }
    });

    it('says to create the table from schema.sql when createTable is false and it is missing', async () => {
      const store = postgresStore({ pool: smallPool(), table: `ledger_missing_${unique()}`, createTable: false, ledger: true });
      await expect(store.ledger!.list()).rejects.toThrow(
        /^\[@payhook\/store-postgres\] could not list the records of .*_ledger.*schema\.sql/,
      );
      await expect(store.ledger!.append([entry()])).rejects.toThrow(/does not exist: create it from the package's schema\.sql/);
    });

    it('reads back strings that jsonb cannot hold (NUL, lone surrogates) as they were written', async () => {
      const table = `ledger_nul_${unique()}`;
      const store = postgresStore({ pool: smallPool(), table, ledger: true });
      try {
        const odd = `a\u0000b\u0001c\uD800d\uDC00e😀\\u0000`;
        const e = entry({ reference: odd, body: `{"x":"${odd}"}`, error: '\u0001\u0001' });
        const plain = entry({ reference: 'plain' });
        await store.ledger!.append([e, plain]);
        expect(await store.ledger!.get(e.id)).toEqual(e);
        expect(await store.ledger!.list({ reference: odd })).toEqual([e]);
        await store.ledger!.update(e.id, { late: { outcome: 'failed', durationMs: 1, error: 'boom\u0000' } });
        expect(await store.ledger!.get(e.id)).toEqual({ ...e, late: { outcome: 'failed', durationMs: 1, error: 'boom\u0000' } });
        expect(await store.ledger!.get(plain.id)).toEqual(plain);
      } finally {
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
        await store.close();
      }
    });

    it('takes a retried batch once, and trims from several processes at once without errors', async () => {
      const table = `ledger_conc_${unique()}`;
      const stores = Array.from({ length: 4 }, () => postgresStore({ pool: smallPool(), table, ledger: { maxEntries: 50 } }));
      try {
        const first = Array.from({ length: 10 }, () => entry());
        await stores[0]!.ledger!.append(first);
        await stores[1]!.ledger!.append(first);
        expect(await rowCount(`${table}_ledger`)).toBe(10);
        await Promise.all(
          stores.map(async (s) => {
            for (let b = 0; b < 10; b++) await s.ledger!.append(Array.from({ length: 10 }, () => entry()));
          }),
        );
        // 410 written, at most 50 kept, plus what the last batches of each process added before a trim saw them.
        const rows = await rowCount(`${table}_ledger`);
        expect(rows).toBeGreaterThanOrEqual(50);
        expect(rows).toBeLessThanOrEqual(50 + 4 * 10);
      } finally {
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('keeps all of 10,000 records appended in batches of 100 under maxEntries 20,000', async () => {
      const table = `ledger_bulk_${unique()}`;
      const store = postgresStore({ pool: smallPool(), table, ledger: { maxEntries: 20_000 } });
      try {
        await store.createTable();
        const times: number[] = [];
        for (let b = 0; b < 100; b++) {
          const batch = Array.from({ length: 100 }, (_, i) =>
            entry({
              reference: `ref_${b}_${i}`,
              dedupeKey: `sandbox:ref_${b}_${i}:payment.success`,
              attempt: 1,
              secretIndex: 0,
              signatureHeader: `sha256=${'0'.repeat(64)}`,
            }),
          );
          const start = performance.now();
          await store.ledger!.append(batch);
          times.push(performance.now() - start);
        }
        expect(await rowCount(`${table}_ledger`)).toBe(10_000);
        const { rows } = await admin.query<{ bytes: string }>(`select pg_total_relation_size($1) as bytes`, [`${table}_ledger`]);
        const sorted = [...times].sort((a, b) => a - b);
        const mean = times.reduce((a, b) => a + b, 0) / times.length;
        console.info(
          `postgres ledger: 100 batches of 100: mean ${mean.toFixed(2)} ms, median ${sorted[50]!.toFixed(2)} ms, max ${sorted[99]!.toFixed(2)} ms per batch; ` +
            `${(Number(rows[0]!.bytes) / 10_000).toFixed(0)} bytes per record (pg_total_relation_size)`,
        );
        const page = await store.ledger!.list({ limit: 1000 });
        expect(page).toHaveLength(1000);
        expect(page[0]!.reference).toBe('ref_99_99');
      } finally {
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
        await store.close();
      }
    });

    it('purges ledger rows past their retention with nobody writing, on the store purge timer; open dead letters last their own', async () => {
      const table = `ledger_purge_${unique()}`;
      const timers: (() => unknown)[] = [];
      const clock: Clock = { now: () => Date.now(), setTimeout: (run) => (timers.push(run), run), clearTimeout: () => {} };
      const store = postgresStore({ pool: smallPool(), table, clock, ledger: { retentionMs: 60_000, deadLetterRetentionMs: 120_000 } });
      try {
        const t = Date.now();
        const at = (ms: number, fields: Partial<LedgerEntry> = {}) => ({ ...entry(fields), receivedAt: t - ms });
        const old = at(61_000);
        const oldRefusal = at(61_000, { signature: 'invalid', outcome: 'unauthorized', status: 401 });
        const dead = at(90_000, { outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
        const deadExpired = at(130_000, { outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
        const fresh = at(0);
        // One append: its trim saw the table before the batch, so the old rows stay until a purge.
        await store.ledger!.append([old, oldRefusal, dead, deadExpired, fresh]);
        expect(await rowCount(`${table}_ledger`)).toBe(5);
        expect(timers).toHaveLength(1);
        await timers.pop()!();
        const { rows } = await admin.query<{ id: string }>(`select id from ${table}_ledger order by id`);
        expect(rows.map((r) => r.id)).toEqual([dead.id, fresh.id]);
        // purgeExpired() reaches the ledger too.
        await admin.query(`insert into ${table}_ledger (entry) values ($1::jsonb)`, [JSON.stringify(at(70_000))]);
        expect(await store.purgeExpired()).toBe(1);
      } finally {
        await store.close();
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
      }
    });

    it('adds the refused column to a ledger table made by an earlier version', async () => {
      const table = `ledger_old_${unique()}`;
      const old = postgresStore({ pool: smallPool(), table, ledger: true, purge: false });
      try {
        await old.createTable();
        await admin.query(`drop index ${table}_ledger_refused_idx; alter table ${table}_ledger drop column refused`);
        await admin.query(`insert into ${table}_ledger (entry) values ($1::jsonb)`, [
          JSON.stringify(entry({ signature: 'invalid', outcome: 'unauthorized' })),
        ]);
        const store = postgresStore({ pool: smallPool(), table, ledger: { maxRefusals: 5 }, purge: false });
        await store.createTable();
        const { rows } = await admin.query<{ refused: boolean }>(`select refused from ${table}_ledger`);
        expect(rows).toEqual([{ refused: true }]);
        await store.close();
      } finally {
        await old.close();
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
      }
    });
  });
});
