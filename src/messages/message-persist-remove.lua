-- KEYS[1] buffer   the persist buffer
-- KEYS[2] lease    its drain lease
-- ARGV[1] token    the drain's token
-- ARGV[2] written  entries written (the head of the buffer)
-- Removes them when the lease is still this drain's: 1; else 0 (the new holder writes them again).
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[1], tonumber(ARGV[2]), -1)
return 1
