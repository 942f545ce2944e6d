import { ledgerSchemaSql } from './ledger-schema.js';

const NAME = '[@payhook/store-postgres]';
const PART = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The default table name. */
export const DEFAULT_TABLE = 'payhook_deliveries';

/** A table name as given (`name` or `schema.name`), checked and quoted for SQL. */
export function quoteTable(table: string): { sql: string; name: string } {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((p) => PART.test(p))) {
    throw new TypeError(
      `${NAME} table must be a plain identifier or schema.identifier (letters, digits, _; up to 63 each); got ${JSON.stringify(table)}.`,
    );
  }
  return { sql: parts.map((p) => `"${p}"`).join('.'), name: parts[parts.length - 1]! };
}

/** The ledger's table for the store's `table`: `<table>_ledger`, in the same schema. */
export function ledgerTable(table: string): { sql: string; name: string } {
  const { name } = quoteTable(table);
  if (name.length > 56) {
    throw new TypeError(
      `${NAME} the ledger's table is the store's table name followed by _ledger, and must fit in 63 characters: use a table name of at most 56 (got ${JSON.stringify(name)}, ${name.length}), or go without the ledger (no \`ledger\` option; schemaSql(table, { ledger: false }) in migrations).`,
    );
  }
  return quoteTable(`${table}_ledger`);
}

/**
 * The schema the store needs, for `table`: the same SQL as the package's `schema.sql` (which uses
 * the default table name), with the ledger's table unless `ledger` is false. Idempotent; run it
 * from your own migrations when `createTable` is false.
 *
 * @example
 * await pool.query(schemaSql('billing.payhook_deliveries'));
 */
export function schemaSql(table: string = DEFAULT_TABLE, { ledger = true }: { ledger?: boolean } = {}): string {
  const { sql, name } = quoteTable(table);
  const l = ledger ? ledgerTable(table) : undefined;
  return `-- The records of @payhook/store-postgres: one row per dedupe key. A logged table: a claim or a done
-- record that a crash forgets would let a delivery run twice. All times come from the database clock.
CREATE TABLE IF NOT EXISTS ${sql} (
  key              text        PRIMARY KEY,
  state            text        NOT NULL CHECK (state IN ('claimed', 'released', 'done')),
  -- 1 on the first claim, one more after each release or lapsed lease.
  attempt          integer     NOT NULL,
  -- The token of the claim; kept on a done record so that its own complete() is idempotent.
  token            text,
  lease_expires_at timestamptz,
  -- A done record's: 'ok', or 'failed' when a handler threw NonRetriableError (the store reads it as 'rejected').
  outcome          text        CHECK (outcome IN ('ok', 'failed')),
  completed_at     timestamptz,
  -- Past this the row is treated as absent, and the store's hourly purge (or purgeExpired()) deletes it.
  expires_at       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "${name}_expires_at_idx" ON ${sql} (expires_at);
${l ? `\n${ledgerSchemaSql(l.sql, l.name)}` : ''}`;
}
