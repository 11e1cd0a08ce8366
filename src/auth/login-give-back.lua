-- KEYS[1] attempts  the attempts of one (user name, address)
-- ARGV (none)
-- Takes one attempt back (a successful login); never below zero. Returns the count before.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return n
