import { type Connection, inTransaction } from './driver.js';

/**
 * The claims' table: one row per dedupe key. `lease_until` ends a claim; `expires_at` ends the
 * record (its retention), after which it is as good as absent and the hourly purge deletes it.
 * Times are epoch ms on the store's clock.
 */
export const claimsSchema = (t: string) => `
CREATE TABLE IF NOT EXISTS "${t}" (
  key          TEXT    PRIMARY KEY,
  state        TEXT    NOT NULL,
  attempt      INTEGER NOT NULL,
  token        TEXT,
  lease_until  INTEGER,
  outcome      TEXT,
  completed_at INTEGER,
  expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "${t}_expires" ON "${t}" (expires_at);
`;

/**
 * The ledger's table: one row per delivery attempt, the record as JSON in `entry` (JSON.stringify
 * escapes every character, so it reads back exactly), and beside it the columns the filters and
 * the bounds read, written from the record on every write.
 */
export const ledgerSchema = (t: string) => `
CREATE TABLE IF NOT EXISTS "${t}" (
  id           TEXT    PRIMARY KEY,
  received_at  INTEGER NOT NULL,
  account      TEXT,
  reference    TEXT,
  event        TEXT,
  outcome      TEXT    NOT NULL,
  late_outcome TEXT,
  dead         INTEGER NOT NULL,
  open_dead    INTEGER NOT NULL,
  refused      INTEGER NOT NULL,
  entry        TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "${t}_ref" ON "${t}" (reference, id);
CREATE INDEX IF NOT EXISTS "${t}_at" ON "${t}" (received_at);
CREATE INDEX IF NOT EXISTS "${t}_refused" ON "${t}" (refused, id);
CREATE INDEX IF NOT EXISTS "${t}_dead" ON "${t}" (id) WHERE dead = 1;
`;

/**
 * The ledger's table made (`ledgerSchema`) and brought up to date: a table made by an earlier
 * version gets the account column (issue 50), filled from the records it holds, in a write
 * transaction so that processes opening the file together add it once; then its index.
 */
export function ledgerTable(db: Connection, t: string): void {
  db.exec(ledgerSchema(t));
  const hasAccount = () => (db.prepare(`PRAGMA table_info("${t}")`).all() as { name: string }[]).some((c) => c.name === 'account');
  if (!hasAccount()) {
    inTransaction(db, () => {
      if (hasAccount()) return;
      db.exec(`ALTER TABLE "${t}" ADD COLUMN account TEXT`);
      db.exec(`UPDATE "${t}" SET account = json_extract(entry, '$.account') WHERE json_extract(entry, '$.account') IS NOT NULL`);
    });
  }
  db.exec(`CREATE INDEX IF NOT EXISTS "${t}_account" ON "${t}" (account, id) WHERE account IS NOT NULL`);
}

/** The claims' statements, prepared once (the table made first). Every write returns a row per row it changed. */
export function claimStatements(db: Connection, t: string) {
  db.exec(claimsSchema(t));
  const live = `key = ? AND state = 'claimed' AND token = ? AND lease_until > ?`;
  return {
    read: db.prepare(`SELECT state, attempt, token, lease_until, outcome, completed_at, expires_at FROM "${t}" WHERE key = ?`),
    claim: db.prepare(
      `INSERT INTO "${t}" (key, state, attempt, token, lease_until, outcome, completed_at, expires_at) VALUES (?, 'claimed', ?, ?, ?, NULL, NULL, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'claimed', attempt = excluded.attempt, token = excluded.token,
         lease_until = excluded.lease_until, outcome = NULL, completed_at = NULL, expires_at = excluded.expires_at RETURNING 1`,
    ),
    // The token stays on a done record: completing again with it is not an error.
    complete: db.prepare(
      `UPDATE "${t}" SET state = 'done', outcome = ?, completed_at = ?, expires_at = ?, lease_until = NULL WHERE ${live} RETURNING 1`,
    ),
    completedBy: db.prepare(`SELECT 1 FROM "${t}" WHERE key = ? AND state = 'done' AND token = ? AND expires_at > ?`),
    release: db.prepare(`UPDATE "${t}" SET state = 'released', token = NULL, lease_until = NULL, expires_at = ? WHERE ${live} RETURNING 1`),
    extend: db.prepare(`UPDATE "${t}" SET lease_until = ?, expires_at = max(expires_at, ?) WHERE ${live} RETURNING 1`),
    purge: db.prepare(`DELETE FROM "${t}" WHERE key IN (SELECT key FROM "${t}" WHERE expires_at <= ? LIMIT ?) RETURNING 1`),
  };
}
