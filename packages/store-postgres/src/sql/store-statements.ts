import type { Outcome } from '@payhook/core/store';

/**
 * Every SQL statement of the store's records, for the quoted table `t` (the purge's are in
 * purge.ts). Times come from the database clock (`clock_timestamp()`); durations are passed in
 * milliseconds.
 *
 * A claim that ends (done or released) is told on `channel` with its key, at commit, for the
 * copies that wait for it (listener.ts); without a channel (`listen: false`) nothing is told.
 * NOTIFY takes a lock for the whole database from its commit's start to its end, so the commits
 * that notify take turns, each for as long as a synchronous standby takes to confirm it.
 *
 * @example
 * const SQL = storeStatements('"payhook_deliveries"', channelOf('payhook_deliveries'));
 * await pool.query({ text: SQL.get, values: [key] });
 */
export function storeStatements(t: string, channel: string | undefined) {
  const ms = (col: string) => `floor(extract(epoch from ${col}) * 1000)::float8`;
  // Told to the store's listeners at commit: the key's claim ended, a copy waiting for it looks again.
  const told = (key: string) => (channel === undefined ? 'NULL' : `pg_notify('${channel}', ${key})`);
  const after = (param: string) => `clock_timestamp() + ${param} * interval '1 millisecond'`;
  const held = `key = $1 AND token = $2 AND state = 'claimed' AND lease_expires_at > clock_timestamp()`;

  return {
    // One statement, so a claim is one round trip. From the key's current row it either inserts
    // a new row (losers of a race for a new key do nothing, and take no row lock), or takes over
    // a row past its retention, released, or whose lease has lapsed (the UPDATE re-checks its
    // WHERE on the newest row version under a row lock, so only one takeover wins), or reports
    // the row that someone else holds.
    claim: `
      WITH cur AS (
        SELECT state, attempt, outcome, completed_at, lease_expires_at, expires_at,
               expires_at <= clock_timestamp()
               OR state = 'released'
               OR (state = 'claimed' AND lease_expires_at <= clock_timestamp()) AS free
        FROM ${t} WHERE key = $1
      ),
      inserted AS (
        INSERT INTO ${t} (key, state, attempt, token, lease_expires_at, expires_at)
        SELECT $1, 'claimed', 1, $2, ${after('$3::float8')}, ${after('$4::float8')}
        WHERE NOT EXISTS (SELECT 1 FROM cur)
        ON CONFLICT (key) DO NOTHING
        RETURNING attempt
      ),
      taken AS (
        UPDATE ${t} AS r SET
          state = 'claimed',
          -- Past its retention the row is as good as absent: the count starts again.
          attempt = CASE WHEN r.expires_at <= clock_timestamp() THEN 1 ELSE r.attempt + 1 END,
          token = $2,
          lease_expires_at = ${after('$3::float8')},
          outcome = NULL,
          completed_at = NULL,
          expires_at = ${after('$4::float8')}
        WHERE r.key = $1
          AND EXISTS (SELECT 1 FROM cur WHERE free)
          AND (r.expires_at <= clock_timestamp()
               OR r.state = 'released'
               OR (r.state = 'claimed' AND r.lease_expires_at <= clock_timestamp()))
        RETURNING r.attempt
      ),
      won AS (SELECT attempt FROM inserted UNION ALL SELECT attempt FROM taken)
      SELECT $1 AS key, 'claimed' AS status, attempt, NULL::text AS outcome, NULL::float8 AS at FROM won
      UNION ALL
      SELECT $1, CASE WHEN state = 'done' AND NOT free THEN 'done' ELSE 'in-progress' END, attempt, outcome,
             CASE WHEN state = 'done' THEN ${ms('completed_at')} ELSE ${ms('lease_expires_at')} END
      -- Lost a race for a free key: someone else holds it now.
      FROM cur WHERE NOT EXISTS (SELECT 1 FROM won)`,
    // The claims of one turn (`grouped()`), one statement and so one commit: the claim above for
    // each of $1 (keys, distinct), $2 (tokens), $3 (leases), with retention $4. New keys are
    // inserted in key order, so two processes' statements over the same new keys never wait on
    // each other crosswise. Returns the key with each row; a key with no row is in progress.
    claimMany: `
      WITH req AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) AS q(key, token, lease)
      ),
      cur AS (
        SELECT key, state, attempt, outcome, completed_at, lease_expires_at,
               expires_at <= clock_timestamp()
               OR state = 'released'
               OR (state = 'claimed' AND lease_expires_at <= clock_timestamp()) AS free
        FROM ${t} WHERE key = ANY($1::text[])
      ),
      inserted AS (
        INSERT INTO ${t} (key, state, attempt, token, lease_expires_at, expires_at)
        SELECT req.key, 'claimed', 1, req.token, ${after('req.lease')}, ${after('greatest(req.lease, $4::float8)')}
        FROM req WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.key = req.key)
        ORDER BY req.key
        ON CONFLICT (key) DO NOTHING
        RETURNING key, attempt
      ),
      taken AS (
        UPDATE ${t} AS r SET
          state = 'claimed',
          attempt = CASE WHEN r.expires_at <= clock_timestamp() THEN 1 ELSE r.attempt + 1 END,
          token = req.token,
          lease_expires_at = ${after('req.lease')},
          outcome = NULL,
          completed_at = NULL,
          expires_at = ${after('greatest(req.lease, $4::float8)')}
        FROM req
        WHERE r.key = req.key
          AND EXISTS (SELECT 1 FROM cur WHERE cur.key = r.key AND cur.free)
          AND (r.expires_at <= clock_timestamp()
               OR r.state = 'released'
               OR (r.state = 'claimed' AND r.lease_expires_at <= clock_timestamp()))
        RETURNING r.key, r.attempt
      ),
      won AS (SELECT key, attempt FROM inserted UNION ALL SELECT key, attempt FROM taken)
      SELECT key, 'claimed' AS status, attempt, NULL::text AS outcome, NULL::float8 AS at FROM won
      UNION ALL
      SELECT key, CASE WHEN state = 'done' AND NOT free THEN 'done' ELSE 'in-progress' END, attempt, outcome,
             CASE WHEN state = 'done' THEN ${ms('completed_at')} ELSE ${ms('lease_expires_at')} END
      FROM cur WHERE NOT EXISTS (SELECT 1 FROM won WHERE won.key = cur.key)`,
    // The done records of one turn, one statement: the complete below for each of $1 (keys), $2
    // (tokens), $3 (outcome columns), $4 (ttls). Returns the positions (from 1) whose token held.
    completeMany: `
      WITH req AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) WITH ORDINALITY AS q(key, token, outcome, ttl, i)
      ),
      done AS (
        UPDATE ${t} AS r SET state = 'done', outcome = req.outcome, completed_at = clock_timestamp(), lease_expires_at = NULL,
          expires_at = ${after('req.ttl')}
        FROM req
        WHERE r.key = req.key AND r.token = req.token AND r.state = 'claimed' AND r.lease_expires_at > clock_timestamp()
        RETURNING r.key, r.token, ${told('r.key')}
      )
      SELECT req.i::int AS i FROM req
      WHERE EXISTS (SELECT 1 FROM done WHERE done.key = req.key AND done.token = req.token)
         OR EXISTS (SELECT 1 FROM ${t} AS r WHERE r.key = req.key AND r.token = req.token AND r.state = 'done'
                    AND r.expires_at > clock_timestamp())`,
    // Idempotent for the token that completed the record (the receiver completes again after transactional()).
    complete: `
      WITH done AS (
        UPDATE ${t} SET state = 'done', outcome = $3, completed_at = clock_timestamp(), lease_expires_at = NULL,
          expires_at = ${after('$4::float8')}
        WHERE ${held}
        RETURNING ${told('key')}
      )
      SELECT 1 AS i WHERE EXISTS (SELECT 1 FROM done)
          OR EXISTS (SELECT 1 FROM ${t} WHERE key = $1 AND token = $2 AND state = 'done' AND expires_at > clock_timestamp())`,
    release: `
      UPDATE ${t} SET state = 'released', token = NULL, lease_expires_at = NULL, expires_at = ${after('$3::float8')}
      WHERE ${held}
      RETURNING ${told('key')}`,
    extend: `
      UPDATE ${t} SET lease_expires_at = ${after('$3::float8')}, expires_at = greatest(expires_at, ${after('$3::float8')})
      WHERE ${held}`,
    get: `
      SELECT state, attempt, outcome, ${ms('completed_at')} AS completed_at, ${ms('lease_expires_at')} AS lease,
             lease_expires_at > clock_timestamp() AS leased
      FROM ${t} WHERE key = $1 AND expires_at > clock_timestamp()`,
    // In the transaction of transactional({ claim: 'inside' }): claims the key as done at once, so the
    // claim, the effect and the done record are one commit. A new key's row, or a free row taken over
    // ($2 the token, $3 the retention). A key someone holds or has done returns no row; a copy's
    // statement waits on the row until this transaction ends, then finds it done.
    claimDone: `
      INSERT INTO ${t} AS r (key, state, attempt, token, outcome, completed_at, lease_expires_at, expires_at)
      VALUES ($1, 'done', 1, $2, 'ok', clock_timestamp(), NULL, ${after('$3::float8')})
      ON CONFLICT (key) DO UPDATE SET
        state = 'done',
        attempt = CASE WHEN r.expires_at <= clock_timestamp() THEN 1 ELSE r.attempt + 1 END,
        token = EXCLUDED.token,
        outcome = 'ok',
        completed_at = clock_timestamp(),
        lease_expires_at = NULL,
        expires_at = EXCLUDED.expires_at
      WHERE r.expires_at <= clock_timestamp()
         OR r.state = 'released'
         OR (r.state = 'claimed' AND r.lease_expires_at <= clock_timestamp())
      RETURNING r.attempt, ${told('r.key')}`,
    // In the transaction of transactional(): marks done first, so the row stays locked while the effect runs.
    completeHeld: `
      UPDATE ${t} SET state = 'done', outcome = 'ok', completed_at = clock_timestamp(), lease_expires_at = NULL,
        expires_at = ${after('$3::float8')}
      WHERE ${held}
      RETURNING ${told('key')}`,
  };
}

/**
 * A done record's outcome as its column keeps it. The column's CHECK, in every table made so far
 * (and in the schemas of those who run their own migrations), allows 'ok' and 'failed' only, so
 * `rejected` (a handler threw NonRetriableError) is kept as 'failed', the name it had before core
 * called it by the receiver's outcome. Old and new records are then one and the same, and a
 * process of an earlier version reads a new record as it always did.
 */
export const columnOf = (outcome: Outcome | undefined): 'ok' | 'failed' => (outcome === undefined || outcome === 'ok' ? 'ok' : 'failed');
