-- KEYS[1] attempts       the attempts of one (user name, address) in the current window
-- ARGV[1] windowSeconds  the window's length
-- Counts one attempt (INCR; the window's expiry on the first). Returns {attempts including this
-- one, seconds left in the window}.
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
