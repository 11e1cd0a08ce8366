-- KEYS[1] lease          the lease key
-- KEYS[2] tokenCounter   its fencing-token counter (same slot)
-- ARGV[1] instanceId
-- ARGV[2] ttlMs
-- ARGV[3] owner          this process's random lease owner id (lease-scripts.ts leaseValue)
-- Takes the lease when it is free, or when it holds a value of this process (its owner id): a
-- term this process ended, or an acquisition whose reply it never got (a timeout while Redis was
-- frozen: the script ran late, and the lease would otherwise be held by nobody for a whole TTL).
-- The caller competes only while it has no term of this task, so such a value is never live.
-- Issues the next fencing token. Returns {1, token} when taken, {0, PTTL of the holder} otherwise.
local current = redis.call('GET', KEYS[1])
local mine = '@' .. ARGV[3]
if current and string.sub(current, -#mine) ~= mine then
  return {0, redis.call('PTTL', KEYS[1])}
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token .. mine, 'PX', ARGV[2])
return {1, token}
