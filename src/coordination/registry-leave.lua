-- KEYS[1] index
-- KEYS[2] details
-- KEYS[3..] the sets of the queues the instance consumes
-- ARGV[1] id
-- Removes the instance from the registry.
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
