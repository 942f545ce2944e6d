import { COMMON_OUTCOMES } from '@payhook/core/lifecycle';

/**
 * The ledger's table (the store's `ledger` option), for the quoted table `sql` whose last part is
 * `name`: one row per delivery attempt. The record itself is the `entry` column, as JSON, so that
 * it reads back as it was written; every other column is generated from it, so a filter or a
 * bound can never disagree with the record it returns. Generated columns need PostgreSQL 12.
 *
 * @example
 * await pool.query(ledgerSchemaSql('"payhook_deliveries_ledger"', 'payhook_deliveries_ledger'));
 */
export function ledgerSchemaSql(sql: string, name: string): string {
  // From core's outcome table (OUTCOMES), so that this list cannot drift from the receiver's. Should
  // it ever change, the index needs a new name: IF NOT EXISTS leaves an index made earlier as it was.
  const common = COMMON_OUTCOMES.map((o) => `'${o}'`).join(', ');
  // Index names past 63 characters would be cut short by Postgres, and two could end up alike.
  const idx = (suffix: string) => `"${name.slice(0, 63 - suffix.length)}${suffix}"`;
  return `-- The delivery ledger (the \`ledger\` option): one row per delivery attempt, the record as JSON;
-- the other columns are generated from it for the filters and the bounds. PostgreSQL 12 or later.
CREATE TABLE IF NOT EXISTS ${sql} (
  entry        jsonb   NOT NULL,
  -- Ids sort by time as text, byte by byte as in JavaScript: "C", whatever the database's collation.
  id           text    COLLATE "C" GENERATED ALWAYS AS (entry->>'id') STORED PRIMARY KEY,
  -- Epoch ms on the receiver's clock.
  received_at  float8  NOT NULL GENERATED ALWAYS AS ((entry->>'receivedAt')::float8) STORED,
  reference    text    GENERATED ALWAYS AS (entry->>'reference') STORED,
  event        text    GENERATED ALWAYS AS (entry->>'event') STORED,
  outcome      text    NOT NULL GENERATED ALWAYS AS (entry->>'outcome') STORED,
  late_outcome text    GENERATED ALWAYS AS (entry->'late'->>'outcome') STORED,
  dead         boolean NOT NULL GENERATED ALWAYS AS (entry ? 'deadLetter') STORED,
  -- A dead letter no retry has answered yet: kept past both bounds.
  open_dead    boolean NOT NULL GENERATED ALWAYS AS (entry ? 'deadLetter' AND NOT (entry->'deadLetter' ? 'retriedBy')) STORED
);
CREATE INDEX IF NOT EXISTS ${idx('_ref_idx')} ON ${sql} (reference, id);
-- For the retention bound and the time filters.
CREATE INDEX IF NOT EXISTS ${idx('_at_idx')} ON ${sql} (received_at);
-- The outcome filter, in the answers and the late outcomes. The common answers are found by walking
-- the newest records; only the rare ones (failed, rejected, unauthorized, ...) need an index.
CREATE INDEX IF NOT EXISTS ${idx('_outcome_idx')} ON ${sql} (outcome, id)
  WHERE outcome NOT IN (${common});
CREATE INDEX IF NOT EXISTS ${idx('_late_idx')} ON ${sql} (late_outcome, id) WHERE late_outcome IS NOT NULL;
-- Dead letters are few: found without reading the rest.
CREATE INDEX IF NOT EXISTS ${idx('_dead_idx')} ON ${sql} (id) WHERE dead;
-- A refusal: a webhook request whose signature did not check out, kept without its body and on a
-- bound of its own (maxRefusals). Added by ALTER so that a table made by an earlier version gets it.
ALTER TABLE ${sql} ADD COLUMN IF NOT EXISTS
  refused      boolean NOT NULL GENERATED ALWAYS AS (COALESCE(entry->>'source' = 'webhook' AND entry->>'signature' IS DISTINCT FROM 'valid', false)) STORED;
CREATE INDEX IF NOT EXISTS ${idx('_refused_idx')} ON ${sql} (id) WHERE refused;
-- The merchant account of a platform's record (issue 50): a listing by account reads its own rows
-- only. Added by ALTER, as refused is, so that a table made by an earlier version gets it.
ALTER TABLE ${sql} ADD COLUMN IF NOT EXISTS
  account      text    GENERATED ALWAYS AS (entry->>'account') STORED;
CREATE INDEX IF NOT EXISTS ${idx('_account_idx')} ON ${sql} (account, id) WHERE account IS NOT NULL;
`;
}
