-- KEYS[1] state         the domain's state hash
-- KEYS[2] line          the domain's waiting line
-- ARGV[1] jobId
-- ARGV[2] intervalMs
-- ARGV[3] retryAfterMs  extra wait the server asked for (Retry-After; 0: none)
-- ARGV[4] idleTtlMs
-- ARGV[5] stepMs        reservation step
-- ARGV[6] requested     1 when the job's request was made (its end is recorded), 0 when its turn goes back unused
-- Returns {next job id, ms until its turn} when the first job in line has a slot other than the
-- domain's next turn (its slot is moved to that turn) and no other request is in flight, else {}.
local t = redis.call('TIME')
local interval, extra = tonumber(ARGV[2]), tonumber(ARGV[3])
-- A recorded end is rounded up so the interval is never short; with no interval, or nothing to
-- record, that would only make an acquire in the same millisecond wait.
local round = (interval > 0 and ARGV[6] == '1') and math.ceil or math.floor
local now = tonumber(t[1]) * 1000 + round(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'holder', 'last', 'next', 'holderUntil')
local holder = s[1]
if holder == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'holder', 'holderUntil')
  holder = nil
elseif holder and (tonumber(s[4]) or 0) <= now then
  holder = nil
end
local last = tonumber(s[2])
if ARGV[6] == '1' then
  last = math.max(last or 0, now, now + extra - interval)
  redis.call('HSET', KEYS[1], 'last', last)
end
local turn = last and math.max(now, last + interval) or now
local nextFree = math.max(tonumber(s[3]) or 0, turn)
redis.call('HSET', KEYS[1], 'next', nextFree)
redis.call('ZREM', KEYS[2], ARGV[1])
local ttl = nextFree - now + tonumber(ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
if holder then return {} end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] and tonumber(first[2]) ~= turn then
  redis.call('ZADD', KEYS[2], turn, first[1])
  -- a reservation made from now on comes after the one just moved
  if nextFree < turn + tonumber(ARGV[5]) then redis.call('HSET', KEYS[1], 'next', turn + tonumber(ARGV[5])) end
  return {first[1], turn - now}
end
return {}
