/**
 * The Lua scripts that make leases and fenced writes atomic in Redis. A lease is one string key per instrument,
 * `<token>:<replica>`, with an expiry; the token comes from a counter per instrument that only grows (the fencing
 * token). Every fenced write names the lease value it believes it holds and is refused (`FENCED`) when the lease is
 * gone or held by another value: a replica paused past its lease cannot act after another took over.
 */

/** Redis's clock in ms (scripts are replicated by their effects: reading TIME is allowed before writes). */
const NOW_MS = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * KEYS: lease, fence counter. ARGV: replica, ttl ms, the highest fencing token the replica has seen for this
 * instrument. → {token, holder, ttl ms, 1 when the counter was behind what the replica had seen (Redis lost its data:
 * a FLUSHALL, a restart without persistence or from an older snapshot), else 0}, or {0, holder, ttl ms, the holder's
 * token} when another holds it. A token never goes backwards: it is one more than the counter and than what the
 * replica saw, and never below Redis's time in ms (a counter that is missing, or restored older from a snapshot, with
 * replicas that never saw the newest tokens, still gives tokens above those issued before, unless Redis's clock went
 * back; grants of one instrument come far less often than once a ms).
 */
export const ACQUIRE = `${NOW_MS}
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, ':', 1, true)
  local holder = string.sub(cur, sep + 1)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {tonumber(string.sub(cur, 1, sep - 1)), holder, tonumber(ARGV[2]), 0}
  end
  return {0, holder, redis.call('PTTL', KEYS[1]), tonumber(string.sub(cur, 1, sep - 1))}
end
local raw = redis.call('GET', KEYS[2])
local counter = tonumber(raw) or 0
local seen = tonumber(ARGV[3]) or 0
local lost = 0
if counter < seen then lost = 1 end
-- never below Redis's time in ms either: a counter restored older (a stale snapshot) that no replica saw beyond
-- still hands out a token above every one issued before (unless Redis's clock went back)
local t = math.max(math.max(counter, seen) + 1, now_ms())
local token = string.format('%d', t)
redis.call('SET', KEYS[2], token)
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
return {t, ARGV[1], tonumber(ARGV[2]), lost}
`;

/** KEYS: lease. ARGV: lease value, ttl ms. → 1 renewed (compare-and-extend), 0 lost. */
export const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS: lease. ARGV: lease value. → 1 released, 0 not ours. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

/**
 * KEYS: lock. ARGV: value (random, then `:<replica>`), ttl ms. → {1} taken (SET NX PX), or {0, the holder's value, its
 * ttl ms} when another holds it (read in the same step: the refusal names who holds it). Released by RELEASE,
 * extended by RENEW (compare-and-delete, compare-and-extend on the random value).
 */
export const LOCK_TAKE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
return {0, redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}
`;

/** The guard every fenced script starts with. */
const FENCE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held')
end
`;

/**
 * `keep(hash, order)`: a ledger is kept 30 days after its last claim or answer (an instrument taken out of the lab
 * leaves nothing for ever; no answer is refused because of one that old). The ledger order's next score (needs NOW_MS): Redis's time in ms, or just above the newest entry when that is not
 * older (several entries in one ms): the order is the order of the writes, so the bound drops the oldest first, and
 * never a newer answer that shared a millisecond with an older one. `zset` is the order key.
 */
const NEXT_SCORE = `
local function keep(a, b)
  redis.call('PEXPIRE', a, ${30 * 24 * 3600_000})
  redis.call('PEXPIRE', b, ${30 * 24 * 3600_000})
end
local function next_score(zset)
  local now = now_ms()
  local top = redis.call('ZREVRANGE', zset, 0, 0, 'WITHSCORES')
  if top[2] and tonumber(top[2]) >= now then return tonumber(top[2]) + 0.001 end
  return now
end
`;

/**
 * KEYS: lease, ledger hash, ledger order zset. ARGV: lease value, error key, record JSON. Claim-before-send: → nil
 * claimed, or {the record already there (another replica answered, or is answering), its age in ms by Redis's
 * clock ('' when unknown)}: whether a claim in flight was left by a dead replica is decided on one clock, not on
 * the replicas' (a host whose clock runs ahead would take a live claim for a dead one).
 */
export const FENCED_LEDGER_CLAIM = `${FENCE}${NOW_MS}${NEXT_SCORE}
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then
  redis.call('ZADD', KEYS[3], next_score(KEYS[3]), ARGV[2])
  keep(KEYS[2], KEYS[3])
  return false
end
local at = redis.call('ZSCORE', KEYS[3], ARGV[2])
return {redis.call('HGET', KEYS[2], ARGV[2]), at and tostring(now_ms() - tonumber(at)) or ''}
`;

/** KEYS: lease, zset of deadlines, hash of bodies. ARGV: lease value, key, deadline ms, JSON. Adds or replaces. */
export const FENCED_SCHEDULE = `${FENCE}
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
return 1
`;

/**
 * KEYS: lease, zset of deadlines, hash of bodies. ARGV: lease value, now ms, max, then keys left where they are (the
 * caller's own timers send them). Takes at most max of the other defaults due by now: removed from the schedule in
 * the same step, so a default is handed out once across all replicas.
 */
export const FENCED_TAKE_DUE = `${FENCE}
local skip = {}
for i = 4, #ARGV do skip[ARGV[i]] = true end
local max = tonumber(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', 0, max + #ARGV - 3)
local out = {}
local n = 0
for _, k in ipairs(due) do
  if not skip[k] and n < max then
    n = n + 1
    local body = redis.call('HGET', KEYS[3], k)
    redis.call('ZREM', KEYS[2], k)
    redis.call('HDEL', KEYS[3], k)
    if body then table.insert(out, k); table.insert(out, body) end
  end
end
return out
`;

/**
 * KEYS: zset of deadlines, hash of bodies. ARGV: key, deadline ms, JSON. Gives back a default this replica took and
 * could not send (its automatic answer was fenced: another replica holds the instrument now), so that the holder
 * sends it. Not fenced: the replica that took a default is the only one that has it; nothing is replaced.
 */
export const GIVE_BACK = `
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 1 then redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3]) end
return 1
`;

/** KEYS: zset of deadlines, hash of bodies. ARGV: key. Cancels (not fenced: cancelling is always safe). */
export const CANCEL = `
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
`;

/** KEYS: replicas zset. ARGV: replica, ttl ms. Heartbeat on Redis's clock; → live replicas, sorted. */
export const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[2] ~= '0' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) else redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZRANGE', KEYS[1], 0, -1)
`;

/**
 * KEYS: the group's instruments zset. ARGV: ttl ms, instrument ids this replica knows. → how many instruments the
 * live replicas know together (each id counts until its ttl after the last replica that knows it said so).
 */
export const GROUP_INSTRUMENTS = `${NOW_MS}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i]) end
return redis.call('ZCARD', KEYS[1])
`;

/**
 * KEYS: the group's holdings hash (replica → how many leases it holds). ARGV: replica, its count ('' : it leaves),
 * the live replicas (the entries of others are dropped: one hash slot, the live set comes in ARGV). → the hash,
 * flat: a replica beyond its share hands a lease over only to one under its share that knows the instrument.
 */
export const HOLDING = `
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
local live = {}
for i = 3, #ARGV do live[ARGV[i]] = true end
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  if all[i] == ARGV[1] or live[all[i]] then
    table.insert(out, all[i])
    table.insert(out, all[i + 1])
  else
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return out
`;

/**
 * Sets `run` to the run id of the server running the script ('' when INFO is refused: renamed, or an ACL), followed
 * by `:<n>` once that server has evicted n keys (INFO stats `evicted_keys`): a Redis at its `maxmemory` with an
 * evicting policy (`allkeys-lru`, `volatile-lru`...) drops keys of the group (the shared memory of raised errors,
 * answer ledgers) and tells nobody else; the count growing reads as another run, a loss like a restart.
 */
const RUN_ID = `
local ok, info = pcall(redis.call, 'INFO', 'server')
local run = ''
if ok and type(info) == 'string' then run = string.match(info, 'run_id:(%x+)') or '' end
if run ~= '' then
  local sok, stats = pcall(redis.call, 'INFO', 'stats')
  local evicted = sok and type(stats) == 'string' and string.match(stats, 'evicted_keys:(%d+)')
  if evicted and evicted ~= '0' then run = run .. ':' .. evicted end
end
`;

/**
 * KEYS: the group's epoch. ARGV: a candidate (random). → [the epoch, the run id of the Redis server that holds it
 * ('' when INFO is refused)]: the epoch is set once by the first replica that finds none. A replica that saw another
 * epoch before knows Redis lost its data (FLUSHALL, a restart without persistence), even when it never saw the lease
 * of the instrument it takes next; one that saw another run id knows the server restarted (or another took over):
 * the writes of its last moments may be gone with it (a snapshot older than them), though epoch and sequences look
 * as they were.
 */
export const EPOCH = `${RUN_ID}
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return { redis.call('GET', KEYS[1]), run }
`;

/**
 * KEYS: an instrument's write sequence. → [the sequence ('' when none), the run id of the Redis server that holds it
 * ('' when INFO is refused)]. In a Cluster the instrument's keys (its hash tag) are on another master than the
 * epoch as a rule: only this run id tells that master restarted (or failed over) while the epoch's ran on.
 */
export const SEQUENCE = `${RUN_ID}
return { redis.call('GET', KEYS[1]) or '', run }
`;

/**
 * KEYS: the group's epoch. ARGV: the epoch the replica read, a new one (random). A replica that found Redis lost
 * writes (an instrument's write sequence lower than it knew: a restore from an older snapshot) gives the group a new
 * epoch, so every replica tells the loss at its next round. Compare-and-set: two replicas finding it rotate it once.
 * → the epoch now.
 */
export const EPOCH_ROTATE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) end
return redis.call('GET', KEYS[1])
`;

/** KEYS: replicas zset. → {Redis time ms, live replica...}: who is alive, and when that was read. */
export const LIVE = `${NOW_MS}
local now = now_ms()
local out = {now}
for _, r in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do table.insert(out, r) end
return out
`;

/**
 * KEYS: the registration's users zset (replica → when it said it uses it, Redis time). ARGV: replica, 'add' |
 * 'remove', when the live replicas were read (ms), the live replicas. → how many replicas still use it: a user that
 * is not live and said so before the live replicas were read died without saying it stopped (one just added counts).
 * One key only, in the instrument's hash slot (Redis Cluster): the live replicas come in ARGV (read by LIVE).
 */
export const USERS = `${NOW_MS}
if ARGV[2] == 'add' then redis.call('ZADD', KEYS[1], now_ms(), ARGV[1]) else redis.call('ZREM', KEYS[1], ARGV[1]) end
local live = {}
for i = 4, #ARGV do live[ARGV[i]] = true end
local users = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #users, 2 do
  local r = users[i]
  if r ~= ARGV[1] and not live[r] and tonumber(users[i + 1]) < tonumber(ARGV[3]) then redis.call('ZREM', KEYS[1], r) end
end
return redis.call('ZCARD', KEYS[1])
`;

/**
 * The seen hash holds one field per error, `<source>:<key>\n<identity>` (several errors listed under one id are
 * several errors); versions before 0.4.1 wrote `<source>:<key>` (one error per id), still read: `legacy(field,
 * prefix)` is true when the old field holds this very error.
 */
const LEGACY = `
local function legacy(field, prefix)
  local cur = redis.call('HGET', KEYS[2], field)
  return cur and string.sub(cur, 1, string.len(prefix)) == prefix
end
`;

/**
 * KEYS: lease, seen hash, the instrument's write sequence. ARGV: lease value, the error's field, entry JSON (its
 * identity first), identity prefix, the field as versions before 0.4.1 named it. → the write sequence after this
 * write (≥ 1) when the error is new to every replica, 0 when it was raised before. Every write of the seen store
 * bumps the sequence: a replica that later reads it lower than it knew it knows Redis lost writes (a restore from an
 * older snapshot).
 */
export const FENCED_SEEN_RAISE = `${FENCE}${LEGACY}
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 or legacy(ARGV[5], ARGV[4]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return redis.call('INCR', KEYS[3])
`;

/**
 * KEYS: lease, seen hash, resolving hash, write sequence. ARGV: lease value, the error's field, identity prefix of
 * the entry, the field and body of its resolution in the resolving hash ('' : none), the error's field before 0.4.1.
 * → the write sequence (≥ 1) resolved now, 0 before. With a resolving body the resolution is claimed (two-phase:
 * settled once its msg went out), so a holder that dies before leaves it to the next.
 */
export const FENCED_SEEN_RESOLVE = `${FENCE}${LEGACY}
local field = ARGV[2]
if redis.call('HEXISTS', KEYS[2], field) == 0 then
  if not legacy(ARGV[6], ARGV[3]) then return 0 end
  field = ARGV[6]
end
redis.call('HDEL', KEYS[2], field)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[4], ARGV[5]) end
return redis.call('INCR', KEYS[4])
`;

/**
 * KEYS: lease, hash, write sequence. ARGV: lease value, field, expected value, new value, the field it is kept under
 * from now on ('' : the same; an entry written before 0.4.1 moves to its field of one error). A new holder takes
 * over a claim an earlier holder left unsettled (compare-and-set, fenced): → the write sequence (≥ 1) taken (the new
 * holder sends it again, marked), 0 changed meanwhile.
 */
export const FENCED_SWAP = `${FENCE}
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[3] then return 0 end
local field = ARGV[2]
if ARGV[5] ~= '' and ARGV[5] ~= ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[2])
  field = ARGV[5]
end
redis.call('HSET', KEYS[2], field, ARGV[4])
return redis.call('INCR', KEYS[3])
`;

/**
 * KEYS: hash. ARGV: field, expected value, new value ('' deletes). Settles a claim once its msg went out: raised →
 * delivered, a resolution → gone. Not fenced, compare-and-set: a claim another holder took over meanwhile stays its.
 */
export const SEEN_SETTLE = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 1
`;

/**
 * KEYS: ledger hash, ledger order zset. ARGV: error key, record JSON. Claim-before-send of a person's answer (any
 * replica). The order zset holds each entry's claim time (Redis's clock): what the ledger's bound drops first.
 * → nil claimed, or {the record there, its age in ms by Redis's clock ('' when unknown)} as FENCED_LEDGER_CLAIM.
 */
export const LEDGER_CLAIM = `${NOW_MS}${NEXT_SCORE}
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], next_score(KEYS[2]), ARGV[1])
  keep(KEYS[1], KEYS[2])
  return false
end
local at = redis.call('ZSCORE', KEYS[2], ARGV[1])
return {redis.call('HGET', KEYS[1], ARGV[1]), at and tostring(now_ms() - tonumber(at)) or ''}
`;

/**
 * KEYS: ledger hash, ledger order zset. ARGV: error key, record JSON, its `at` (ms). A replica's own entry written back
 * after Redis lost its data: → 1 written where there is none, or where the entry there is older (by its `at`): of
 * two replicas' entries under one id (an id the instrument reused: one answer to the error that had it, one to the
 * error that has it now), the newest is kept whichever replica writes back first; → 0 when the one there is as new,
 * or in flight (an answer being sent, maybe claimed after the loss: a replica whose clock runs ahead must not replace
 * it with an older entry of its own).
 */
export const LEDGER_WRITE_BACK = `${NOW_MS}${NEXT_SCORE}
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  local at = ok and type(rec) == 'table' and tonumber(rec['at']) or nil
  if at == nil or at >= tonumber(ARGV[3]) or rec['outcome'] == 'in-flight' then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], next_score(KEYS[2]), ARGV[1])
keep(KEYS[1], KEYS[2])
return 1
`;

/**
 * KEYS: ledger hash, ledger order zset. ARGV: error key, expected JSON, new JSON ('' deletes), most entries kept,
 * ms after which an answer still in flight was lost with its replica. Confirms (or replaces) an entry, then bounds
 * the ledger: past the most kept, the oldest entries go first, answered ones and claims in flight for longer than a
 * request can last; a claim that may still be in flight is never dropped (it would let a second answer through).
 */
export const LEDGER_SETTLE = `${NOW_MS}${NEXT_SCORE}
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
local now = now_ms()
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], next_score(KEYS[2]), ARGV[1])
keep(KEYS[1], KEYS[2])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, excess + 99, 'WITHSCORES')
  for i = 1, #oldest, 2 do
    if excess <= 0 then break end
    local k = oldest[i]
    local v = redis.call('HGET', KEYS[1], k)
    local young = v and string.find(v, '"outcome":"in-flight"', 1, true) and now - tonumber(oldest[i + 1]) <= tonumber(ARGV[5])
    if not young then
      redis.call('HDEL', KEYS[1], k)
      redis.call('ZREM', KEYS[2], k)
      excess = excess - 1
    end
  end
end
return 1
`;

/**
 * KEYS: the error's used-token zset, the page's used-token zset. ARGV: token MAC, its expiry (ms), most per error,
 * most in all. A one-time form token used: → 1 the first time (on any replica), 0 when used before, or when the
 * error's share or the page's whole set is full of live tokens (refused rather than forget one: a used token is
 * never forgotten before its form expires, so no form can be replayed). Expired entries are dropped first. The
 * expiry is on the clock of the replica that issued the form, the set is pruned on Redis's: a form Redis's clock
 * says expired is refused (0) too, never recorded for the moment until the next prune, whatever the replica's clock.
 */
export const FORM_TOKEN_USE = `${NOW_MS}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if tonumber(ARGV[2]) <= now then return 0 end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) or redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local keep = math.max(1, math.ceil(tonumber(ARGV[2]) - now))
if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], keep) end
if redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keep) end
return 1
`;

/**
 * KEYS: the error's used-token zset, the page's used-token zset. ARGV: most per error, most in all. → 1 when forms of
 * the error are refused because a set is full of live tokens, counted on Redis's clock as FORM_TOKEN_USE prunes them
 * (a replica's clock ahead would miss the tokens that expired for it and not yet for Redis), else 0.
 */
export const FORMS_FULL = `${NOW_MS}
local live = '(' .. string.format('%d', now_ms())
if redis.call('ZCOUNT', KEYS[1], live, '+inf') >= tonumber(ARGV[1]) then return 1 end
if redis.call('ZCOUNT', KEYS[2], live, '+inf') >= tonumber(ARGV[2]) then return 1 end
return 0
`;

/** KEYS: lease, zset of deadlines, hash of bodies. ARGV: lease value, key. → 1 taken now (send it), 0 gone already. */
export const FENCED_TAKE_ONE = `${FENCE}
local removed = redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
return removed
`;

/**
 * KEYS: seen hash, write sequence. ARGV: the error's field, entry JSON, identity prefix, 'raise' | 'resolve', the
 * error's field before 0.4.1. What a replica notified while Redis was unreachable (or knew open when Redis lost it),
 * written once it is back, by whichever replica (those msgs went out already: no lease needed). → the write sequence
 * when written, 0 when nothing changed.
 */
export const SEEN_CATCH_UP = `
local function legacy(field, prefix)
  local cur = redis.call('HGET', KEYS[1], field)
  return cur and string.sub(cur, 1, string.len(prefix)) == prefix
end
local has = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[4] == 'raise' then
  if has or legacy(ARGV[5], ARGV[3]) then return 0 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
elseif has then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif legacy(ARGV[5], ARGV[3]) then
  redis.call('HDEL', KEYS[1], ARGV[5])
else
  return 0
end
return redis.call('INCR', KEYS[2])
`;

/**
 * KEYS: lease, value key. ARGV: lease value, value, ttl ms. Replaces a value only the holder may write (run-watch
 * memory), kept for the ttl: the memory of a node that was removed (or got a new id) goes by itself.
 */
export const FENCED_SET = `${FENCE}
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
`;
