-- KEYS[1] lease  a buffer's drain lease
-- ARGV[1] token  the drain's token
-- Drops the lease when it is this drain's.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
