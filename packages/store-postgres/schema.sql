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
  outcome          text        CHECK (outcome IN ('ok', 'failed')),
  completed_at     timestamptz,
  -- Past this the row is treated as absent, and purgeExpired() deletes it.
  expires_at       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "payhook_deliveries_expires_at_idx" ON "payhook_deliveries" (expires_at);
