-- KEYS[1] lock   the refill lock
-- ARGV[1] token  the refill's lock token
-- Returns 1 when the lock was released, 0 when another holder (or nobody) has it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
