/*
 * The Lua scripts behind the Redis ledger. Every key shares the hash tag {ledger}, so each script
 * touches one Cluster slot even where it reaches keys it only learns from a record (index sets):
 *
 *   KEYS[1]  <base>all        zset of every record        (score receivedAt, member id)
 *   KEYS[2]  <base>live       zset of the records a bound may drop: all but the open dead letters
 *   KEYS[3]  <base>dead       zset of the open dead letters; never expires
 *   KEYS[4]  <base>dead-all   zset of every dead letter, open or retried
 *   <base>e:<id>             string: the record, four lines (below)
 *   <base>ref:<r>, event:<e>, outcome:<o>   zsets: the indexes a query picks from
 *
 * ARGV[1] is <base> (`<prefix>{ledger}:`), ARGV[2] the expiry in ms of keys that hold no open
 * dead letter. A record is `head \n entry \n late \n deadLetter`: JSON.stringify never writes a raw
 * newline, so the lines split safely; `head` ({k: index keys, l: late outcome's key}) tells a trim
 * which indexes hold the id without decoding the body, and `late` and `deadLetter` are lines of
 * their own so an update replaces them as the client wrote them (cjson would round numbers).
 *
 * Expiry is a safety net for a ledger nobody writes to any more; bounds are kept by trims.
 * Invariant: a key that holds an open dead letter has no expiry, so it outlives both bounds.
 * Ids are never compared in Lua: string comparison there follows the server's locale.
 */

const COMMON = `
local all, live, dead, deadAll = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, ttl = ARGV[1], ARGV[2]

-- A record's head, or nil when it cannot be read (its ids then stay in the indexes, dropped on read).
local function header(v)
  local nl = string.find(v, '\\n', 1, true)
  if not nl then return nil end
  local ok, h = pcall(cjson.decode, string.sub(v, 1, nl - 1))
  if ok and type(h) == 'table' and type(h.k) == 'table' then return h end
  return nil
end

-- The index keys a record's head names (its late outcome's last).
local function indexes(h)
  local out = {}
  if not h then return out end
  for _, k in ipairs(h.k) do out[#out + 1] = base .. k end
  if type(h.l) == 'string' then out[#out + 1] = base .. h.l end
  return out
end

-- Whether a key may hold an open dead letter; a large set is assumed to while any is open.
local function holdsOpen(key)
  if key == live or redis.call('ZCARD', dead) == 0 then return false end
  if redis.call('ZCARD', key) > 100 then return true end
  for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    if redis.call('ZSCORE', dead, id) then return true end
  end
  return false
end

-- Set a key's expiry after a write; pttl is its PTTL before (-1: none, so it may hold an open dead letter).
local function arm(key, pttl, open)
  if open then redis.call('PERSIST', key)
  elseif pttl ~= -1 or not holdsOpen(key) then redis.call('PEXPIRE', key, ttl) end
end
`;

/** ARGV[3..5]: cutoff (receivedAt below it is past the retention), maxEntries, most records to trim; then per record id, receivedAt, state ('' | open | retried), value. Returns how many were trimmed. */
export const APPEND_SCRIPT = `${COMMON}
local cutoff, maxEntries, budget = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local pttls, order, opened = {}, {}, {}
local function add(key, score, id, open)
  if pttls[key] == nil then
    pttls[key] = redis.call('PTTL', key)
    order[#order + 1] = key
  end
  redis.call('ZADD', key, score, id)
  if open then opened[key] = true end
end

for i = 6, #ARGV, 4 do
  local id, score, state, v = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local open = state == 'open'
  local written
  -- NX: a batch sent again after a lost reply changes nothing.
  if open then written = redis.call('SET', base .. 'e:' .. id, v, 'NX')
  else written = redis.call('SET', base .. 'e:' .. id, v, 'NX', 'PX', ttl) end
  if written then
    add(all, score, id, open)
    if open then redis.call('ZADD', dead, score, id) else add(live, score, id, false) end
    if state ~= '' then add(deadAll, score, id, open) end
    for _, key in ipairs(indexes(header(v))) do add(key, score, id, open) end
  end
end

local function drop(id)
  local key = base .. 'e:' .. id
  local v = redis.call('GET', key)
  if v then
    for _, index in ipairs(indexes(header(v))) do redis.call('ZREM', index, id) end
    redis.call('DEL', key)
  end
  redis.call('ZREM', all, id)
  redis.call('ZREM', live, id)
  redis.call('ZREM', deadAll, id)
end

-- Past the retention: only records a bound may drop are in live.
local old = redis.call('ZRANGEBYSCORE', live, '-inf', '(' .. cutoff, 'LIMIT', 0, budget)
for _, id in ipairs(old) do drop(id) end
local trimmed = #old
budget = budget - trimmed

-- Past the count: the newest maxEntries records stay, open dead letters among them counted,
-- as in the memory ledger; of the older ones, only open dead letters stay (they are not in live).
local over = redis.call('ZCARD', all) - maxEntries
if over > 0 and budget > 0 then
  local edge = redis.call('ZRANGE', all, over - 1, over - 1, 'WITHSCORES')
  local found = redis.call('ZRANGEBYSCORE', live, '-inf', edge[2], 'WITHSCORES', 'LIMIT', 0, budget)
  local doomed = {}
  -- Decide before dropping: a drop shifts the ranks that break ties at the edge's score.
  for i = 1, #found, 2 do
    local rank = redis.call('ZRANK', all, found[i])
    if tonumber(found[i + 1]) < tonumber(edge[2]) or (rank and rank < over) then doomed[#doomed + 1] = found[i] end
  end
  for _, id in ipairs(doomed) do drop(id) end
  trimmed = trimmed + #doomed
end

for _, key in ipairs(order) do arm(key, pttls[key], opened[key]) end
return trimmed
`;

/** ARGV[3..7]: id, late JSON ('' to leave), late outcome's index key, deadLetter JSON ('' to leave), its state (open | retried | ''). Returns 1, or 0 when the record is gone. */
export const UPDATE_SCRIPT = `${COMMON}
local id = ARGV[3]
local key = base .. 'e:' .. id
local v = redis.call('GET', key)
if not v then return 0 end
local parts = {}
for part in string.gmatch(v .. '\\n', '([^\\n]*)\\n') do parts[#parts + 1] = part end
local head, entry, late, dl = parts[1], parts[2], parts[3] or '', parts[4] or ''
local h = header(v)
local score = redis.call('ZSCORE', all, id)
local wasOpen = redis.call('ZSCORE', dead, id) ~= false
local open = ARGV[7] == 'open' or (ARGV[7] == '' and wasOpen)

if ARGV[4] ~= '' then
  late = ARGV[4]
  if h and h.l ~= ARGV[5] then
    local shared = false
    for _, k in ipairs(h.k) do shared = shared or k == h.l end
    if type(h.l) == 'string' and not shared then redis.call('ZREM', base .. h.l, id) end
    h.l = ARGV[5]
    head = cjson.encode(h)
  end
  if h and score then
    local index = base .. ARGV[5]
    local pttl = redis.call('PTTL', index)
    redis.call('ZADD', index, score, id)
    arm(index, pttl, open)
  end
end
if ARGV[6] ~= '' then
  dl = ARGV[6]
  if score then
    local pttl = redis.call('PTTL', deadAll)
    redis.call('ZADD', deadAll, score, id)
    arm(deadAll, pttl, open)
    if open then
      redis.call('ZADD', dead, score, id)
      redis.call('ZREM', live, id)
    else
      -- Retried: a bound may drop it again, on the next append if it is already past one.
      redis.call('ZREM', dead, id)
      redis.call('ZADD', live, score, id)
      redis.call('PEXPIRE', live, ttl)
    end
  end
end

-- SET clears the expiry (KEEPTTL needs Redis 6), so it is put back after.
local pttl = redis.call('PTTL', key)
redis.call('SET', key, head .. '\\n' .. entry .. '\\n' .. late .. '\\n' .. dl)
local keys = indexes(h)
keys[#keys + 1] = all
keys[#keys + 1] = deadAll
if open then
  for _, k in ipairs(keys) do redis.call('PERSIST', k) end
elseif wasOpen then
  redis.call('PEXPIRE', key, ttl)
  for _, k in ipairs(keys) do
    if redis.call('PTTL', k) == -1 and not holdsOpen(k) then redis.call('PEXPIRE', k, ttl) end
  end
elseif pttl > 0 then
  redis.call('PEXPIRE', key, pttl)
end
return 1
`;

/**
 * KEYS[5]: the index read. ARGV[3..7]: max score, min score, offset, count, and an id to read
 * below (its score caps max). Returns id, score, value (nil when the record expired unseen) per
 * member, newest first; ids whose record expired are dropped from the indexes on the way.
 */
export const LIST_SCRIPT = `${COMMON}
local max = ARGV[3]
if ARGV[7] ~= '' then
  local s = redis.call('ZSCORE', all, ARGV[7])
  if s and (max == '+inf' or tonumber(s) < tonumber((string.gsub(max, '^%(', '')))) then max = s end
end
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[5], max, ARGV[4], 'WITHSCORES', 'LIMIT', ARGV[5], ARGV[6])
local out = {}
for i = 1, #rows, 2 do
  local id = rows[i]
  local v = redis.call('GET', base .. 'e:' .. id)
  if not v then
    for _, k in ipairs({KEYS[5], all, live, deadAll}) do redis.call('ZREM', k, id) end
  end
  out[#out + 1] = id
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = v
end
return out
`;
