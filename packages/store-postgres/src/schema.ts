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

/**
 * The schema the store needs, for `table`: the same SQL as the package's `schema.sql` (which uses
 * the default table name). Idempotent; run it from your own migrations when `createTable` is false.
 *
 * @example
 * await pool.query(schemaSql('billing.payhook_deliveries'));
 */
export function schemaSql(table: string = DEFAULT_TABLE): string {
  const { sql, name } = quoteTable(table);
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
  outcome          text        CHECK (outcome IN ('ok', 'failed')),
  completed_at     timestamptz,
  -- Past this the row is treated as absent, and purgeExpired() deletes it.
  expires_at       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "${name}_expires_at_idx" ON ${sql} (expires_at);
`;
}
