-- The records of @payhook/store-postgres: one row per dedupe key. A logged table: a claim or a done
-- record that a crash forgets would let a delivery run twice. All times come from the database clock.
CREATE TABLE IF NOT EXISTS "payhook_deliveries" (
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
CREATE INDEX IF NOT EXISTS "payhook_deliveries_expires_at_idx" ON "payhook_deliveries" (expires_at);

-- The delivery ledger (the `ledger` option): one row per delivery attempt, the record as JSON;
-- the other columns are generated from it for the filters and the bounds. PostgreSQL 12 or later.
CREATE TABLE IF NOT EXISTS "payhook_deliveries_ledger" (
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
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_ref_idx" ON "payhook_deliveries_ledger" (reference, id);
-- For the retention bound and the time filters.
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_at_idx" ON "payhook_deliveries_ledger" (received_at);
-- The outcome filter, in the answers and the late outcomes. The common answers are found by walking
-- the newest records; only the rare ones (failed, rejected, unauthorized, ...) need an index.
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_outcome_idx" ON "payhook_deliveries_ledger" (outcome, id)
  WHERE outcome NOT IN ('processed', 'queued', 'duplicate', 'ignored', 'accepted');
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_late_idx" ON "payhook_deliveries_ledger" (late_outcome, id) WHERE late_outcome IS NOT NULL;
-- Dead letters are few: found without reading the rest.
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_dead_idx" ON "payhook_deliveries_ledger" (id) WHERE dead;
-- A refusal: a webhook request whose signature did not check out, kept without its body and on a
-- bound of its own (maxRefusals). Added by ALTER so that a table made by an earlier version gets it.
ALTER TABLE "payhook_deliveries_ledger" ADD COLUMN IF NOT EXISTS
  refused      boolean NOT NULL GENERATED ALWAYS AS (COALESCE(entry->>'source' = 'webhook' AND entry->>'signature' IS DISTINCT FROM 'valid', false)) STORED;
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_refused_idx" ON "payhook_deliveries_ledger" (id) WHERE refused;
-- The merchant account of a platform's record (issue 50): a listing by account reads its own rows
-- only. Added by ALTER, as refused is, so that a table made by an earlier version gets it.
ALTER TABLE "payhook_deliveries_ledger" ADD COLUMN IF NOT EXISTS
  account      text    GENERATED ALWAYS AS (entry->>'account') STORED;
CREATE INDEX IF NOT EXISTS "payhook_deliveries_ledger_account_idx" ON "payhook_deliveries_ledger" (account, id) WHERE account IS NOT NULL;
