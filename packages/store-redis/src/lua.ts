/*
 * The Lua scripts behind the Redis store. Each record lives in two keys that share a hash tag,
 * so every script touches one Cluster slot:
 *
 *   KEYS[1]  <prefix>{<key>}:rec    hash: state (claimed | released | done), attempt, token,
 *                                   outcome (ok | rejected, once failed), completedAt; expires
 *                                   after the retention
 *   KEYS[2]  <prefix>{<key>}:lease  string: the token of the live claim, set with SET NX PX,
 *                                   so Redis itself ends the lease
 *
 * Times come from the Redis server's clock (TIME), so processes with skewed clocks agree.
 * Scripts that write after TIME need effect replication, the default since Redis 5.
 */

const NOW = `
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/** ARGV: token, leaseMs, recordTtlMs. Idempotent for its token. Returns {'claimed', attempt} | {'in-progress', leaseExpiresAt} | {'done', outcome, completedAt}. */
export const CLAIM_SCRIPT = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'outcome', 'completedAt')
if rec[1] == 'done' then return {'done', rec[2], rec[3]} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  -- A released or lapsed claim keeps its attempt count: the next run is a redelivery.
  local attempt = redis.call('HINCRBY', KEYS[1], 'attempt', 1)
  redis.call('HSET', KEYS[1], 'state', 'claimed', 'token', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'claimed', attempt}
end
-- The same token again: a claim sent twice (a retried request, a pipeline retried whole) is still its own.
if redis.call('GET', KEYS[2]) == ARGV[1] then return {'claimed', tonumber(redis.call('HGET', KEYS[1], 'attempt'))} end
return {'in-progress', now() + redis.call('PTTL', KEYS[2])}
`;

/**
 * ARGV: token, ttlMs, outcome, and optionally a channel, where KEYS[1] is published for the copies
 * waiting for it. Returns 1 when the token holds the claim (or already completed it), else 0.
 */
export const COMPLETE_SCRIPT = `${NOW}
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('HSET', KEYS[1], 'state', 'done', 'outcome', ARGV[3], 'completedAt', now(), 'token', ARGV[1])
  redis.call('DEL', KEYS[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[4] then redis.call('PUBLISH', ARGV[4], KEYS[1]) end
  return 1
end
-- Idempotent for the token that completed it: a retried complete whose first reply was lost.
local rec = redis.call('HMGET', KEYS[1], 'state', 'token')
if rec[1] == 'done' and rec[2] == ARGV[1] then return 1 end
return 0
`;

/** ARGV: token, recordTtlMs, and optionally a channel, as for complete. Returns 1 when released, 0 when the token does not hold the claim. */
export const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'state', 'released')
  redis.call('HDEL', KEYS[1], 'token')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[3] then redis.call('PUBLISH', ARGV[3], KEYS[1]) end
  return 1
end
return 0
`;

/** ARGV: token, leaseMs. Returns 1 when extended, 0 when the token does not hold the claim. */
export const EXTEND_SCRIPT = `
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  -- The record must outlive its lease, or a lapsed claim would forget its attempt count.
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  return 1
end
return 0
`;

/** No ARGV. Returns nil, or {state, attempt, outcome, completedAt, leaseExpiresAt or -1}. */
export const GET_SCRIPT = `${NOW}
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'outcome', 'completedAt')
if not rec[1] then return nil end
local pttl = redis.call('PTTL', KEYS[2])
local lease = -1
if pttl > 0 then lease = now() + pttl end
return {rec[1], rec[2], rec[3], rec[4], lease}
`;
