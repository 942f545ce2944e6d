/**
 * The ledger behind a public endpoint, on the real stores: refusals kept as metadata on a bound
 * of their own, a record the store refuses costing only itself, and a rejected event's done record
 * outliving its dead letter.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, NonRetriableError, type Store } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import { redisStore } from '@payhook/store-redis';
import { postgresStore } from '@payhook/store-postgres';
import { sqliteStore } from '@payhook/store-sqlite';
import Database from 'better-sqlite3';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { captureWaitUntil } from '@payhook/test-support/wait';

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

const secret = 'whsec_public_endpoint';
const quiet = { info() {}, warn() {}, error() {} };
const DAY = 24 * 60 * 60 * 1000;
const MiB = 1024 * 1024;
// A 1 MiB body that JSON would escape six times over: control characters.
const body = new Uint8Array(MiB).fill(0x01);

/** An unsigned delivery: refused with 401 without the store, its record (names read from the small body) written after. */
const unsigned = (payload: unknown) => new Request('http://x/', { method: 'POST', body: JSON.stringify(payload) });

/**
 * 30 honest records and one the store refuses (reference 'poison'), written by the receiver's
 * ledger writer as one batch: unsigned deliveries are answered without a round trip to the store,
 * so all 31 are answered before the writer's next turn.
 */
async function oneBadRecord(store: Store) {
  const lines: string[] = [];
  const logger = (level: string, _fields: unknown, message: string) => void (level === 'error' && lines.push(message));
  const receiver = createReceiver({ secret, store, logger });
  const { waitUntil, settled } = captureWaitUntil();
  const run = randomUUID().slice(0, 8);
  const refs = Array.from({ length: 31 }, (_, i) => (i === 12 ? 'poison' : `honest-${run}-${i}`));
  for (const reference of refs)
    expect((await receiver.handle(unsigned({ event: 'payment.success', reference }), { waitUntil })).status).toBe(401);
  await settled();
  // Read as one list: the store may refuse a query by the poisoned reference itself.
  const kept = new Set((await store.ledger!.list({ limit: 100 })).map((e) => e.reference));
  return { lines, honest: refs.filter((r, i) => i !== 12 && kept.has(r)).length, poison: kept.has('poison') };
}

/** A flood of unsigned 1 MiB bodies through a receiver; the accepted record and the open dead letter before it stay. */
async function flood(store: Store, n: number) {
  const receiver = createReceiver({ secret, store, logger: quiet });
  receiver.on('payment.success', (e) => {
    if (e.reference.startsWith('dead')) throw new NonRetriableError('no such order');
  });
  // The ledger writes after the answer: `settled()` awaits the writer's idle(), handed to the platform's waitUntil.
  const { waitUntil, settled } = captureWaitUntil();
  const ok = `ok-${randomUUID()}`;
  const dead = `dead-${randomUUID()}`;
  for (const reference of [ok, dead])
    await receiver.handle(signedRequest(createEvent('payment.success', { reference }), { secret }), { waitUntil });
  await settled();
  return {
    async send() {
      for (let i = 0; i < n; i++)
        expect((await receiver.handle(new Request('http://x/', { method: 'POST', body }), { waitUntil })).status).toBe(401);
      await settled();
    },
    async survivors(ledger: Ledger) {
      return {
        ok: (await ledger.list({ reference: ok })).length,
        dead: (await ledger.list({ reference: dead, deadLetters: 'open' })).length,
      };
    },
  };
}

describe.skipIf(!redisUrl)('redis: the ledger behind a public endpoint', () => {
  const redis = new Redis(redisUrl!);
  const prefixes: string[] = [];
  const open = (ledger: Parameters<typeof redisStore>[0]['ledger']) => {
    const prefix = `payhook-public-${randomUUID().slice(0, 8)}:`;
    prefixes.push(prefix);
    return { prefix, store: redisStore({ client: redis, prefix, ledger, checkDurability: false }) };
  };
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    }
    redis.disconnect();
  });

  it('stores under 1 KiB per refused 1 MiB body, trims refusals against maxRefusals, and keeps every accepted record and open dead letter', async () => {
    // Past 128 members a sorted set leaves its compact encoding: 300 kept measures the cost at scale.
    const { store } = open({ maxEntries: 2, maxRefusals: 300 });
    const run = await flood(store, 500);
    const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
    const before = await used();
    await run.send();
    const perRefusal = ((await used()) - before) / 300;
    const kept = await store.ledger!.list({ outcome: 'unauthorized', limit: 1000 });
    console.info(
      `[ledger-redis] 500 refused 1 MiB bodies of control characters: ${kept.length} kept, ${perRefusal.toFixed(0)} bytes of Redis memory per refusal kept (used_memory delta)`,
    );
    expect(kept.length).toBe(300);
    expect(kept[0]!.body).toBeUndefined();
    expect(perRefusal).toBeLessThan(1024);
    expect(await run.survivors(store.ledger!)).toEqual({ ok: 1, dead: 1 });
  });

  it('writes the rest of a batch when Redis refuses one record (an index key of the wrong type)', async () => {
    const { prefix, store } = open(true);
    await redis.set(`${prefix}{ledger}:ref:poison`, 'not a sorted set');
    const { lines, honest, poison } = await oneBadRecord(store);
    expect({ honest, poison }).toEqual({ honest: 30, poison: false });
    expect(lines).toEqual([
      expect.stringMatching(
        /the ledger refused 1 of 31 records written together \(\[@payhook\/store-redis\] could not append 1 ledger records \(WRONGTYPE the ledger key .*ref:poison holds a string/,
      ),
    ]);
  });

  it('keeps a rejected event done a day past its open dead letters (the store ttl the receiver asks for)', async () => {
    const { prefix, store } = open({ deadLetterRetentionMs: 30 * DAY });
    const receiver = createReceiver({ secret, store, logger: quiet }).on('payment.success', () => {
      throw new NonRetriableError('unknown order');
    });
    expect(store.ledger!.failedDoneTtlMs).toBe(31 * DAY);
    const event = createEvent('payment.success', { reference: `rej-${randomUUID()}` });
    await receiver.handle(signedRequest(event, { secret }));
    const ttl = await redis.pttl(`${prefix}{${receiver.dedupeKey(event)}}:rec`);
    expect(ttl).toBeGreaterThan(31 * DAY - 60_000);
    expect(ttl).toBeLessThanOrEqual(31 * DAY);
  });
});

describe.skipIf(!pgUrl)('postgres: the ledger behind a public endpoint', () => {
  const pool = new pg.Pool({ connectionString: pgUrl!, max: 3 });
  const tables: string[] = [];
  const open = (ledger: Parameters<typeof postgresStore>[0]['ledger']) => {
    const table = `payhook_public_${randomUUID().slice(0, 8)}`;
    tables.push(table);
    return { table, store: postgresStore({ pool, table, ledger, purge: false }) };
  };
  afterAll(async () => {
    for (const t of tables) await pool.query(`drop table if exists ${t}, ${t}_ledger`);
    await pool.end();
  });
  const size = async (table: string) =>
    Number((await pool.query<{ n: string }>(`select pg_total_relation_size($1) as n`, [`${table}_ledger`])).rows[0]!.n);

  it('stores under 1 KiB per refused 1 MiB body, trims refusals against maxRefusals, and keeps every accepted record and open dead letter', async () => {
    const { table, store } = open({ maxEntries: 6, maxRefusals: 400 });
    const run = await flood(store, 400);
    const before = await size(table);
    await run.send();
    const perRefusal = ((await size(table)) - before) / 400;
    // Past the bound: the oldest refusals go (the trim sees the table before its batch, so it lags one batch), and no accepted record.
    const more = await flood(store, 100);
    await more.send();
    const last = await flood(store, 10);
    await last.send();
    const kept = await store.ledger!.list({ outcome: 'unauthorized', limit: 1000 });
    console.info(
      `[ledger-postgres] 400 refused 1 MiB bodies of control characters: ${perRefusal.toFixed(0)} bytes of table and indexes per refusal (pg_total_relation_size); ${kept.length} kept after 510 at maxRefusals 400`,
    );
    expect(perRefusal).toBeLessThan(1024);
    expect(kept.length).toBeGreaterThanOrEqual(400);
    expect(kept.length).toBeLessThanOrEqual(410);
    expect(await last.survivors(store.ledger!)).toEqual({ ok: 1, dead: 1 });
    expect(await run.survivors(store.ledger!)).toEqual({ ok: 1, dead: 1 });
    expect(await more.survivors(store.ledger!)).toEqual({ ok: 1, dead: 1 });
  });

  it('writes the rest of a batch when Postgres refuses one record (a CHECK constraint), and cuts a reference past the btree limit', async () => {
    const { table, store } = open(true);
    await store.createTable();
    await pool.query(`alter table ${table}_ledger add constraint no_poison check (reference is distinct from 'poison')`);
    const { lines, honest, poison } = await oneBadRecord(store);
    expect({ honest, poison }).toEqual({ honest: 30, poison: false });
    expect(lines).toEqual([
      expect.stringMatching(
        /the ledger refused 1 of 31 records written together \(\[@payhook\/store-postgres\] could not append records to the ledger .*no_poison/,
      ),
    ]);

    // A reference the index cannot hold: refused by the store when written directly; cut by the writer.
    const long = randomBytes(1_700).toString('hex'); // random: the index cannot compress it under its 2704-byte limit
    const t = Date.now();
    await expect(
      store.ledger!.append([
        {
          id: `${t}-direct`,
          receivedAt: t,
          source: 'webhook',
          reference: long,
          outcome: 'unauthorized',
          status: 401,
          durationMs: 0,
          signature: 'invalid',
        },
      ]),
    ).rejects.toThrow(/index row|btree/i);
    const receiver = createReceiver({ secret, store, logger: quiet });
    const { waitUntil, settled } = captureWaitUntil();
    expect((await receiver.handle(unsigned({ reference: long }), { waitUntil })).status).toBe(401);
    await settled();
    expect((await store.ledger!.list({ reference: `${long.slice(0, 127)}…` })).length).toBe(1);
  });

  it('keeps a rejected event done a day past its open dead letters (the store ttl the receiver asks for)', async () => {
    const { table, store } = open(true);
    const receiver = createReceiver({ secret, store, logger: quiet }).on('payment.success', () => {
      throw new NonRetriableError('unknown order');
    });
    const event = createEvent('payment.success', { reference: `rej-${randomUUID()}` });
    await receiver.handle(signedRequest(event, { secret }));
    const { rows } = await pool.query<{ ms: number }>(
      `select extract(epoch from expires_at - now()) * 1000 as ms from ${table} where key = $1`,
      [receiver.dedupeKey(event)],
    );
    expect(Number(rows[0]!.ms)).toBeGreaterThan(31 * DAY - 60_000);
    expect(Number(rows[0]!.ms)).toBeLessThanOrEqual(31 * DAY + 1_000);
  });
});

describe('sqlite: the ledger behind a public endpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payhook-public-sqlite-'));
  let files = 0;
  const open = (ledger: Parameters<typeof sqliteStore>[0]['ledger']) => {
    const path = join(dir, `ledger-${++files}.db`);
    return { path, store: sqliteStore({ path, driver: Database, ledger }) };
  };
  /** The file's size once its write-ahead log is folded in. */
  const bytes = (path: string) => {
    const db = new Database(path);
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    return statSync(path).size;
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stores under 1 KiB per refused 1 MiB body, trims refusals against maxRefusals, and keeps every accepted record and open dead letter', async () => {
    const { path, store } = open({ maxEntries: 2, maxRefusals: 300 });
    const run = await flood(store, 500);
    const before = bytes(path);
    await run.send();
    const perRefusal = (bytes(path) - before) / 300;
    const kept = await store.ledger!.list({ outcome: 'unauthorized', limit: 1000 });
    console.info(
      `[ledger-sqlite] 500 refused 1 MiB bodies of control characters: ${kept.length} kept, ${perRefusal.toFixed(0)} bytes of file per refusal kept`,
    );
    expect(kept.length).toBe(300);
    expect(kept[0]!.body).toBeUndefined();
    expect(perRefusal).toBeLessThan(1024);
    expect(await run.survivors(store.ledger!)).toEqual({ ok: 1, dead: 1 });
    await store.close();
  });

  it('writes the rest of a batch when SQLite refuses one record (a trigger that aborts it)', async () => {
    const { path, store } = open(true);
    const db = new Database(path);
    db.exec(
      `CREATE TRIGGER poison BEFORE INSERT ON payhook_deliveries_ledger WHEN NEW.reference = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned record'); END`,
    );
    db.close();
    const { lines, honest, poison } = await oneBadRecord(store);
    expect({ honest, poison }).toEqual({ honest: 30, poison: false });
    expect(lines).toEqual([
      expect.stringMatching(
        /the ledger refused 1 of 31 records written together \(\[@payhook\/store-sqlite\] could not append records to the ledger .*poisoned record/,
      ),
    ]);
    await store.close();
  });
});
