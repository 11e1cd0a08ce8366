-- KEYS[1] state          the domain's state hash (next, last, holder, holderUntil)
-- KEYS[2] line           the domain's waiting line (zset job -> slot)
-- ARGV[1] jobId
-- ARGV[2] intervalMs     least time from the end of one request to the start of the next
-- ARGV[3] leaseMs        how long the holder holds the turn (a crashed holder frees it then)
-- ARGV[4] idleTtlMs      unused state is dropped this long after its last reservation
-- ARGV[5] minWaitMs      shortest wait handed out
-- ARGV[6] stepMs         reservation step (the interval plus a margin for the exchange itself)
-- ARGV[7] staleMs        a place in line this far in the past belongs to a job that is gone
-- ARGV[8] handOverMaxMs  longest extra wait of a job whose turn comes by a hand-over
-- ARGV[9] reserveOnly    1: only reserve a place in line (a job about to be queued), 0: acquire
-- Returns 0 when the job may send its request now (it is the holder; with reserveOnly, it may take
-- the turn as soon as it runs), else ms to wait.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, interval, lease, step = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
local s = redis.call('HMGET', KEYS[1], 'next', 'last', 'holder', 'holderUntil')
local nextFree = tonumber(s[1]) or 0
local last = tonumber(s[2])
local holder = s[3]
if holder and (tonumber(s[4]) or 0) <= now then holder = nil end
if holder == job then
  redis.call('HSET', KEYS[1], 'holderUntil', now + lease)
  return 0
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[7]))
local slot = tonumber(redis.call('ZSCORE', KEYS[2], job))
local fresh = not slot
if fresh then
  slot = math.max(nextFree, now)
  nextFree = slot + step
  redis.call('ZADD', KEYS[2], slot, job)
  redis.call('HSET', KEYS[1], 'next', nextFree)
end
local earliest = slot
if last and last + interval > earliest then earliest = last + interval end
local ttl = math.max(nextFree - now, 0) + tonumber(ARGV[4])
if not holder and now >= earliest and ARGV[9] == '1' then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return 0
end
if not holder and now >= earliest then
  redis.call('HSET', KEYS[1], 'holder', job, 'holderUntil', now + lease, 'next', math.max(nextFree, now + step))
  redis.call('ZREM', KEYS[2], job)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return 0
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local wait = earliest - now
-- Someone is in flight: the next start is at least one interval after it ends.
if holder and wait < interval then wait = interval end
-- With a request in flight, or (for a job just joining the line) jobs ahead in line, the turn
-- comes by a hand-over (each release or cancel moves the first job in line to the domain's next
-- turn), so this wait is only a fallback: it is made later by half an interval per request ahead
-- (slots assume short exchanges; real ones drift later), so that the job does not wake before
-- its turn only to be delayed again. A job already in line with nobody in flight gets no
-- hand-over before someone takes the turn: it waits for exactly its own place.
if holder or fresh then
  local ahead = redis.call('ZRANK', KEYS[2], job) + (holder and 1 or 0)
  wait = wait + math.min(ahead * interval / 2, tonumber(ARGV[8]))
end
if wait < tonumber(ARGV[5]) then wait = tonumber(ARGV[5]) end
return math.floor(wait)
