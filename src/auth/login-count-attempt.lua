-- KEYS[1] address        failed attempts from one client address, any user names, in its window
-- KEYS[2] pair           failed attempts of one (user name, client address) in its window (same slot)
-- ARGV[1] addressMax     attempts allowed per address and window
-- ARGV[2] pairMax        attempts allowed per (user name, address) and window
-- ARGV[3] windowSeconds  a window's length, from its first attempt
-- Counts one attempt when both counts are below their limits (INCR both; a window's expiry on its
-- first attempt); when either is at its limit counts nothing, so a count is the password checks
-- made. Returns {1, 0, 0} when counted, {0, seconds until the exceeded window ends, 1 when the
-- address itself is at its limit (else 0)} when refused.
local window = tonumber(ARGV[3])
local function ttl(key)
  local t = redis.call('TTL', key)
  if t < 0 then
    -- A count without expiry (cannot happen through this script; repaired rather than kept forever).
    redis.call('EXPIRE', key, window)
    return window
  end
  return math.max(1, t) -- TTL rounds: under half a second left reads 0
end
local wait = 0
local spent = 0
local address = tonumber(redis.call('GET', KEYS[1]) or '0')
if address >= tonumber(ARGV[1]) then
  wait = ttl(KEYS[1])
  spent = 1
end
local pair = tonumber(redis.call('GET', KEYS[2]) or '0')
if pair >= tonumber(ARGV[2]) then wait = math.max(wait, ttl(KEYS[2])) end
if wait > 0 then return {0, wait, spent} end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], window) end
if redis.call('INCR', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], window) end
return {1, 0, 0}
