import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import type { LedgerEntry } from '@payhook/core';
import { sqliteStore } from '@payhook/store-sqlite';

const dir = mkdtempSync(join(tmpdir(), 'payhook-sqlite-acct-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `ledger-${++files}.db`);

let n = 0;
const entry = (fields: Partial<LedgerEntry> = {}): LedgerEntry => {
  const t = Date.now();
  return {
    id: `${t.toString(36).padStart(11, '0')}-${(n++).toString(36).padStart(4, '0')}-sqacct`,
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

// The ledger's table as versions before the account column made it.
const OLD_LEDGER = (t: string) => `
CREATE TABLE "${t}" (
  id TEXT PRIMARY KEY, received_at INTEGER NOT NULL, reference TEXT, event TEXT, outcome TEXT NOT NULL,
  late_outcome TEXT, dead INTEGER NOT NULL, open_dead INTEGER NOT NULL, refused INTEGER NOT NULL, entry TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX "${t}_ref" ON "${t}" (reference, id);`;

// The account column (issue 50): written with every record, added to older files, and indexed.
describe('sqlite ledger: the account column', () => {
  it('adds the account column to a ledger table made by an earlier version, filled from the records it holds', async () => {
    const path = file();
    const [a, none] = [entry({ account: 'A' }), entry()];
    const old = new Database(path);
    old.exec(OLD_LEDGER('payhook_deliveries_ledger'));
    const insert = old.prepare(
      `INSERT INTO payhook_deliveries_ledger (id, received_at, reference, event, outcome, dead, open_dead, refused, entry) VALUES (?, ?, ?, ?, ?, 0, 0, 0, ?)`,
    );
    for (const e of [a, none]) insert.run(e.id, e.receivedAt, e.reference, e.event, e.outcome, JSON.stringify(e));
    old.close();

    for (let open = 0; open < 2; open++) {
      // Twice: a file already brought up to date is left as it is.
      const store = sqliteStore({ path, driver: Database, ledger: true });
      expect(await store.ledger!.list({ account: 'A' })).toEqual([a]);
      expect((await store.ledger!.list({ reference: 'ref_1' })).map((e) => e.id)).toEqual([none.id, a.id]);
      const b = entry({ account: `B${open}`, reference: 'ref_b' });
      await store.ledger!.append([b]);
      expect(await store.ledger!.list({ account: `B${open}` })).toEqual([b]);
      await store.close();
    }
    const db = new Database(path);
    try {
      const rows = db.prepare('SELECT id, account FROM payhook_deliveries_ledger ORDER BY id').all() as {
        id: string;
        account: string | null;
      }[];
      expect(rows.slice(0, 2)).toEqual([
        { id: a.id, account: 'A' },
        { id: none.id, account: null },
      ]);
      const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'payhook_deliveries_ledger'`).all();
      expect(indexes).toContainEqual({ name: 'payhook_deliveries_ledger_account' });
    } finally {
      db.close();
    }
  });

  it('lists one account through its index', async () => {
    const path = file();
    const sql: string[] = [];
    // The driver, recording the statements the store prepares, so that the list's is explained as sent.
    class Recording extends Database {
      override prepare(source: string) {
        sql.push(source);
        return super.prepare(source);
      }
    }
    const store = sqliteStore({ path, driver: Recording as unknown as typeof Database, ledger: true });
    try {
      for (let b = 0; b < 10; b++) await store.ledger!.append(Array.from({ length: 100 }, (_, i) => entry({ account: `acct_${i % 20}` })));
      const page = await store.ledger!.list({ account: 'acct_3', limit: 10 });
      expect(page).toHaveLength(10);
      expect(page.every((e) => e.account === 'acct_3')).toBe(true);
      const db = new Database(path);
      try {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql.at(-1)!}`).all(0, 0, 'acct_3', 10) as { detail: string }[];
        expect(plan.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING )?INDEX payhook_deliveries_ledger_account/);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });
});
