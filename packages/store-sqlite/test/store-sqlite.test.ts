import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '@payhook/core';
import { sqliteStore } from '@payhook/store-sqlite';
import { createEvent, signedRequest } from '@payhook/testing';
import { ledgerConformance } from '@payhook/testing/ledger';
import { storeConformance } from '@payhook/testing/store';

/**
 * The driver under test: better-sqlite3 (this file's import, the lowest or newest of the peer
 * range by the project, as test/repo/peers.test.ts checks), or node:sqlite when PAYHOOK_SQLITE_DRIVER=node (the file run again on a
 * Node that has it, by node-sqlite.test.ts).
 */
const onNode = process.env.PAYHOOK_SQLITE_DRIVER === 'node';
// Imported only for it: a Node with node:sqlite may be of an ABI the installed addon was not built for.
const driver: unknown = onNode ? undefined : (await import('better-sqlite3')).default;
const dir = mkdtempSync(join(tmpdir(), 'payhook-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `store-${++files}.db`);

// Every store of one file reads this clock: lease and retention tests move it instead of sleeping.
let now = Date.now();
const shared = file();
storeConformance(`sqlite (${onNode ? 'node:sqlite' : 'better-sqlite3'})`, {
  make: () => sqliteStore({ path: shared, driver, retentionMs: 3_600_000, now: () => now }),
  shared: true,
  advance: (ms) => {
    now += ms;
  },
});

ledgerConformance(`sqlite (${onNode ? 'node:sqlite' : 'better-sqlite3'})`, {
  make: async (bounds) => {
    // A file of its own per case: records of other cases must not show.
    const store = sqliteStore({ path: file(), driver, ledger: bounds });
    return { ledger: store.ledger!, close: () => store.close() };
  },
});

describe('sqlite store specifics', () => {
  it('keeps done records in the file: a new store on it finds them, and an expired one is forgotten', async () => {
    const path = file();
    let t = Date.now();
    const first = sqliteStore({ path, driver, retentionMs: 60_000, now: () => t });
    const c = await first.claim('k1', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    expect(await first.complete('k1', c.token)).toBe(true);
    await first.close();
    const second = sqliteStore({ path, driver, retentionMs: 60_000, now: () => t });
    expect(await second.claim('k1', 5_000)).toMatchObject({ status: 'done', outcome: 'ok' });
    t += 60_001;
    expect(await second.purgeExpired()).toBe(1);
    expect(await second.claim('k1', 5_000)).toMatchObject({ status: 'claimed', attempt: 1 });
    await second.close();
  });

  it('runs a handler once for 20 concurrent copies landing on two receivers on one file', async () => {
    const path = file();
    let runs = 0;
    const make = () =>
      createReceiver({ secret: 'whsec_sqlite', logger: { warn() {}, error() {} }, store: sqliteStore({ path, driver }) }).on(
        'payment.success',
        async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 20));
        },
      );
    const receivers = [make(), make()];
    const event = createEvent('payment.success');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => receivers[i % 2]!.handle(signedRequest(event, { secret: 'whsec_sqlite' }))),
    );
    expect(runs).toBe(1);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    for (const r of receivers) await r.store.close?.();
  });

  it('answers 503 naming the file when it cannot write, and loses nothing it already held', async () => {
    const path = file();
    const store = sqliteStore({ path, driver });
    const errors: string[] = [];
    const receiver = createReceiver({
      secret: 'whsec_sqlite',
      store,
      logger: { warn() {}, error: (fields: { err?: unknown }, message: string) => errors.push(`${message} ${String(fields.err)}`) },
    }).on('payment.success', () => {});
    await store.close();
    const answer = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_sqlite' }));
    expect(answer.status).toBe(503);
    expect(await answer.text()).not.toContain(path);
    expect(errors.join('\n')).toContain(`[@payhook/store-sqlite] could not claim`);
  });

  it('answers 503 within the budget while another connection holds the write lock, and claims once it lets go', async () => {
    const path = file();
    const store = sqliteStore({ path, driver, busyTimeoutMs: 200 });
    const receiver = createReceiver({ secret: 'whsec_sqlite', store, budgetMs: 2_000, logger: { warn() {}, error() {} } }).on(
      'payment.success',
      () => {},
    );
    // Another program (or a stuck process) in the middle of a write transaction on the file.
    const Driver = (driver ??
      (process as unknown as { getBuiltinModule(id: string): { DatabaseSync: unknown } }).getBuiltinModule('node:sqlite')
        .DatabaseSync) as new (
      p: string,
    ) => { exec(sql: string): unknown; close(): unknown };
    const holder = new Driver(path);
    holder.exec('BEGIN IMMEDIATE');
    const event = createEvent('payment.success');
    const started = performance.now();
    expect((await receiver.handle(signedRequest(event, { secret: 'whsec_sqlite' }))).status).toBe(503);
    expect(performance.now() - started).toBeLessThan(2_000);
    holder.exec('ROLLBACK');
    holder.close();
    expect((await receiver.handle(signedRequest(event, { secret: 'whsec_sqlite' }))).status).toBe(200);
    await store.close();
  });

  it('refuses a missing path, memory, a bad table name and a directory that does not exist, naming the fix', () => {
    expect(() => sqliteStore({ path: '', driver })).toThrow(/^\[@payhook\/store-sqlite\] path must be a database file.*memoryStore\(\)/);
    expect(() => sqliteStore({ path: ':memory:', driver })).toThrow(/path must be a database file/);
    expect(() => sqliteStore({ path: file(), driver, table: 'x; drop table y' })).toThrow(/table must be a plain SQL name/);
    expect(() => sqliteStore({ path: join(dir, 'no-such-dir', 'p.db'), driver })).toThrow(
      /could not open .*no-such-dir.*Check that its directory exists/,
    );
    expect(() => sqliteStore({ path: file(), driver: 'better-sqlite3' })).toThrow(/driver must be better-sqlite3's Database class/);
    expect(() => sqliteStore({ path: file(), driver, retentionMs: -1 })).toThrow(/retentionMs must be a positive number/);
  });
});

/** Another connection on the file: what a second program sees. */
const open = (path: string) =>
  new (
    (driver ??
      (process as unknown as { getBuiltinModule(id: string): { DatabaseSync: unknown } }).getBuiltinModule('node:sqlite')
        .DatabaseSync) as new (
      p: string,
    ) => { exec(sql: string): unknown; prepare(sql: string): { get(): unknown }; close(): unknown }
  )(path);
const rows = (path: string) => {
  const db = open(path);
  try {
    return (db.prepare('SELECT count(*) AS n FROM payhook_deliveries').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('sqlite store: errors, options and the hourly purge', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('after close, every call fails naming the call, the key, the file and that the store was closed; close again is a no-op', async () => {
    const path = file();
    const store = sqliteStore({ path, driver });
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    const calls: [string, string, () => Promise<unknown>][] = [
      ['claim', 'k', () => store.claim('k', 5_000)],
      ['complete', 'k', () => store.complete('k', 'tk')],
      ['release', 'k', () => store.release('k', 'tk')],
      ['extend', 'k', () => store.extend('k', 'tk', 5_000)],
      ['read', 'k', () => store.get('k')],
      ['purge', 'payhook_deliveries', () => store.purgeExpired()],
    ];
    for (const [what, key, run] of calls) {
      const error = (await run().catch((e: Error) => e)) as Error;
      expect(error.message).toBe(
        `[@payhook/store-sqlite] could not ${what} "${key}" in ${path} (the store was closed). The receiver answers 503 so the service retries; check that the file is writable and that no other program holds it locked longer than busyTimeoutMs (2000 ms).`,
      );
      expect((error.cause as Error).message).toBe('the store was closed');
    }
  });

  it('names the option that is wrong', async () => {
    expect(() => sqliteStore({ path: file(), driver, busyTimeoutMs: 0 })).toThrow(
      /^\[@payhook\/store-sqlite\] busyTimeoutMs must be a positive number/,
    );
    const store = sqliteStore({ path: file(), driver });
    expect(() => store.claim('k', 0)).toThrow(/^\[@payhook\/store-sqlite\] leaseMs must be a positive number/);
    expect(() => store.extend('k', 'tk', -1)).toThrow(/^\[@payhook\/store-sqlite\] leaseMs must be a positive number/);
    expect(() => store.complete('k', 'tk', { ttlMs: 0 })).toThrow(/^\[@payhook\/store-sqlite\] ttlMs must be a positive number/);
    await store.close();
  });

  it('refuses a path that is not a file, quoting it', () => {
    for (const path of [undefined, 42, '   ', 'file::memory:?cache=shared'] as unknown[]) {
      expect(() => sqliteStore({ path, driver } as never)).toThrow(/^\[@payhook\/store-sqlite\] path must be a database file/);
    }
    expect(() => sqliteStore({ path: 'file::memory:?cache=shared', driver })).toThrow(/; got "file::memory:\?cache=shared"\. For one/);
    expect(() => sqliteStore({ driver } as never)).toThrow(/; got null\. For one/);
  });

  it('purges expired records every hour on its own, and logs a purge that fails', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = file();
    let t = Date.now();
    const store = sqliteStore({ path, driver, busyTimeoutMs: 50, now: () => t });
    const c = await store.claim('k', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('k', c.token, { ttlMs: 1_000 });
    t += 1_001;
    vi.advanceTimersByTime(60 * 60 * 1000 - 1);
    expect(rows(path)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(rows(path)).toBe(0);

    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const holder = open(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      vi.advanceTimersByTime(60 * 60 * 1000);
      await vi.waitFor(() => expect(errors).toHaveBeenCalled());
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(String(errors.mock.calls[0]![0])).toMatch(
      new RegExp(
        `^\\[@payhook/store-sqlite\\] the hourly purge of ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed \\(.+\\); it runs again in an hour\\.$`,
      ),
    );
    await store.close();
  });
});
