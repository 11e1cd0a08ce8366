-- KEYS[1] index
-- KEYS[2] membershipIndex
-- KEYS[3..] the membership sets in use (queue sets; role sets of older versions until empty)
-- ARGV[1] ttlMs
-- Removes ids not seen for a TTL from the index and every membership set; forgets empty sets.
-- Returns the number of ids removed from the index.
local t = redis.call('TIME')
local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[1])
local removed = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff)
for i = 3, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. cutoff)
  if redis.call('ZCARD', KEYS[i]) == 0 then redis.call('SREM', KEYS[2], KEYS[i]) end
end
return removed
