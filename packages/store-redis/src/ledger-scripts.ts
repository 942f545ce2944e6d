/*
 * The Lua scripts behind the Redis ledger. Every key shares the hash tag {ledger}, so each script
 * touches one Cluster slot even where it reaches keys it only learns from a record (index sets):
 *
 *   KEYS[1]  <base>all        zset of every record        (score receivedAt, member id)
 *   KEYS[2]  <base>live       zset of the accepted records a bound may drop: not open dead letters, not refusals
 *   KEYS[3]  <base>dead       zset of the open dead letters (kept for deadLetterRetentionMs)
 *   KEYS[4]  <base>dead-all   zset of every dead letter, open or retried
 *   KEYS[5]  <base>refused    zset of the refusals (unsigned or unreadable requests), bounded by maxRefusals
 *   <base>e:<id>             string: the record, four lines (below)
 *   <base>account:<a>, ref:<r>, event:<e>, outcome:<o>   zsets: the indexes a query picks from
 *
 * ARGV[1] is <base> (`<prefix>{ledger}:`), ARGV[2] the client's time (epoch ms, the clock the
 * retention is read by), ARGV[3] the retention and ARGV[4] the open dead letters' retention, in ms.
 * A record is `head \n entry \n late \n deadLetter`: JSON.stringify never writes a raw newline,
 * so the lines split safely; `head` ({k: index keys, l: late outcome's key}) tells a trim which
 * indexes hold the id without decoding the body, and `late` and `deadLetter` are lines of their
 * own so an update replaces them as the client wrote them (cjson would round numbers).
 *
 * A record key expires when its retention ends, counted from its receivedAt (an open dead
 * letter's, deadLetterRetentionMs); an index set expires no sooner than the last record it holds.
 * Trims keep the counts, and drop what a count or a retention let go before its key expires.
 * Ids are never compared in Lua: string comparison there follows the server's locale.
 */

const COMMON = `
local all, live, dead, deadAll, refused = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local base, now, retention, deadRetention = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

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

-- The ms a record received at score has left: its retention, or an open dead letter's.
local function left(score, open)
  return math.ceil(tonumber(score) + (open and deadRetention or retention) - now)
end

-- Keep a set at least ms more, given its PTTL before the write; never shortens it. A set with
-- no expiry (kept so by an older version, for its open dead letters) keeps none: trims empty it,
-- and Redis then deletes it.
local function extend(key, ms, pttl)
  if pttl == -2 or (pttl ~= -1 and pttl < ms) then redis.call('PEXPIRE', key, ms) end
end
local function reach(key, ms)
  extend(key, ms, redis.call('PTTL', key))
end
-- Add to a set that must then live at least ms more.
local function zadd(key, score, id, ms)
  local pttl = redis.call('PTTL', key)
  redis.call('ZADD', key, score, id)
  extend(key, ms, pttl)
end

-- Delete a record and every index entry of it; 1 if its key was there.
local function drop(id)
  local key = base .. 'e:' .. id
  local v = redis.call('GET', key)
  local gone = 0
  if v then
    for _, index in ipairs(indexes(header(v))) do redis.call('ZREM', index, id) end
    gone = redis.call('DEL', key)
  end
  for _, k in ipairs({all, live, dead, deadAll, refused}) do redis.call('ZREM', k, id) end
  return gone
end
`;

/**
 * ARGV[5..9]: the oldest receivedAt kept, the oldest kept of an open dead letter, maxEntries,
 * maxRefusals, most records to trim; then per record id, receivedAt, state ('' | open | retried
 * | refused), value, ms its key lives. Every key is checked before anything is written, so a batch
 * is written whole or not at all. Returns how many were trimmed.
 */
export const APPEND_SCRIPT = `${COMMON}
local cutoff, deadCutoff = ARGV[5], ARGV[6]
local maxEntries, maxRefusals, budget = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])

local function wrongType(key, id)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' or t == 'zset' then return nil end
  return redis.error_reply('WRONGTYPE the ledger key ' .. key .. ' holds a ' .. t .. ', not a sorted set, so record ' .. id .. ' cannot be indexed; delete that key')
end
local heads = {}
for _, key in ipairs({all, live, dead, deadAll, refused}) do
  local bad = wrongType(key, ARGV[10] or '')
  if bad then return bad end
end
for i = 10, #ARGV, 5 do
  heads[i] = indexes(header(ARGV[i + 3]))
  for _, key in ipairs(heads[i]) do
    local bad = wrongType(key, ARGV[i])
    if bad then return bad end
  end
end

-- Each set's PTTL before the batch, and how long its records need it.
local pttls, reaches, order = {}, {}, {}
local function add(key, score, id, ms)
  if pttls[key] == nil then
    pttls[key] = redis.call('PTTL', key)
    order[#order + 1] = key
  end
  redis.call('ZADD', key, score, id)
  if reaches[key] == nil or reaches[key] < ms then reaches[key] = ms end
end
for i = 10, #ARGV, 5 do
  local id, score, state, v, ms = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4])
  -- NX: a batch sent again after a lost reply changes nothing.
  if redis.call('SET', base .. 'e:' .. id, v, 'NX', 'PX', ms) then
    add(all, score, id, ms)
    if state == 'open' then add(dead, score, id, ms)
    elseif state == 'refused' then add(refused, score, id, ms)
    else add(live, score, id, ms) end
    if state == 'open' or state == 'retried' then add(deadAll, score, id, ms) end
    for _, key in ipairs(heads[i]) do add(key, score, id, ms) end
  end
end

local trimmed = 0
local function dropAll(ids)
  for _, id in ipairs(ids) do drop(id) end
  trimmed = trimmed + #ids
  budget = budget - #ids
end
-- Past a retention, oldest first: each set holds only what its bound may drop.
for _, past in ipairs({{live, cutoff}, {refused, cutoff}, {dead, deadCutoff}}) do
  if budget > 0 then dropAll(redis.call('ZRANGEBYSCORE', past[1], '-inf', '(' .. past[2], 'LIMIT', 0, budget)) end
end
-- Past a count: the oldest of the accepted records, and of the refusals, each against its own.
for _, bound in ipairs({{live, maxEntries}, {refused, maxRefusals}}) do
  local over = math.min(redis.call('ZCARD', bound[1]) - bound[2], budget)
  if over > 0 then dropAll(redis.call('ZRANGE', bound[1], 0, over - 1)) end
end

for _, key in ipairs(order) do extend(key, reaches[key], pttls[key]) end
return trimmed
`;

/** ARGV[5..9]: id, late JSON ('' to leave), late outcome's index key, deadLetter JSON ('' to leave), its state (open | retried | ''). Returns 1, or 0 when the record is gone. */
export const UPDATE_SCRIPT = `${COMMON}
local id = ARGV[5]
local key = base .. 'e:' .. id
local v = redis.call('GET', key)
if not v then return 0 end
local parts = {}
for part in string.gmatch(v .. '\\n', '([^\\n]*)\\n') do parts[#parts + 1] = part end
local head, entry, late, dl = parts[1], parts[2], parts[3] or '', parts[4] or ''
local h = header(v)
local score = redis.call('ZSCORE', all, id)
local wasOpen = redis.call('ZSCORE', dead, id) ~= false
local open = ARGV[9] == 'open' or (ARGV[9] == '' and wasOpen)
local ms = score and left(score, open)
-- A dead letter retried past the retention: its record goes now, as its key would have.
if ms and ms <= 0 then
  drop(id)
  return 0
end

if ARGV[6] ~= '' then
  late = ARGV[6]
  if h and h.l ~= ARGV[7] then
    local shared = false
    for _, k in ipairs(h.k) do shared = shared or k == h.l end
    if type(h.l) == 'string' and not shared then redis.call('ZREM', base .. h.l, id) end
    h.l = ARGV[7]
    head = cjson.encode(h)
  end
  if h and score then
    zadd(base .. ARGV[7], score, id, ms)
  end
end
if ARGV[8] ~= '' then
  dl = ARGV[8]
  if score then
    zadd(deadAll, score, id, ms)
    if open then
      zadd(dead, score, id, ms)
      redis.call('ZREM', live, id)
    else
      -- Retried: a bound may drop it again, on the next append if it is already past one.
      redis.call('ZREM', dead, id)
      zadd(live, score, id, ms)
    end
  end
end

-- SET clears the expiry (KEEPTTL needs Redis 6), so it is set again after.
local pttl = redis.call('PTTL', key)
redis.call('SET', key, head .. '\\n' .. entry .. '\\n' .. late .. '\\n' .. dl)
if ms and open ~= wasOpen then
  -- Opened or closed: the key lives as long as its new retention, and its indexes no less.
  redis.call('PEXPIRE', key, ms)
  local keys = indexes(h)
  keys[#keys + 1] = all
  for _, k in ipairs(keys) do reach(k, ms) end
elseif pttl > 0 then
  redis.call('PEXPIRE', key, pttl)
end
return 1
`;

/**
 * KEYS[6]: the index read. ARGV[5..9]: max score, min score, offset, count, and an id to read
 * below (its score caps max). Returns id, score, value (nil when the record expired unseen) per
 * member, newest first; ids whose record expired are dropped from the indexes on the way.
 */
export const LIST_SCRIPT = `${COMMON}
local max = ARGV[5]
if ARGV[9] ~= '' then
  local s = redis.call('ZSCORE', all, ARGV[9])
  if s and (max == '+inf' or tonumber(s) < tonumber((string.gsub(max, '^%(', '')))) then max = s end
end
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[6], max, ARGV[6], 'WITHSCORES', 'LIMIT', ARGV[7], ARGV[8])
local out = {}
for i = 1, #rows, 2 do
  local id = rows[i]
  local v = redis.call('GET', base .. 'e:' .. id)
  if not v then
    for _, k in ipairs({KEYS[6], all, live, dead, deadAll, refused}) do redis.call('ZREM', k, id) end
  end
  out[#out + 1] = id
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = v
end
return out
`;

/** ARGV[5..]: ids. Deletes each record and its index entries, whatever its state; returns how many records there were. */
export const REMOVE_SCRIPT = `${COMMON}
local n = 0
for i = 5, #ARGV do n = n + drop(ARGV[i]) end
return n
`;
