-- KEYS[1] lease          the lease key
-- KEYS[2] tokenCounter   its fencing-token counter (same slot)
-- ARGV[1] instanceId
-- ARGV[2] ttlMs
-- ARGV[3] previousValue  this process's value of its previous term ('' if none)
-- Takes the lease when it is free (or still holds this process's previous value) and issues the
-- next fencing token. Returns {1, token} when taken, {0, PTTL of the holder} otherwise.
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[3] then
  return {0, redis.call('PTTL', KEYS[1])}
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return {1, token}
