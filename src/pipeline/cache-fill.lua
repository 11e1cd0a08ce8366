-- KEYS[1] cache    the cache key
-- KEYS[2] version  its version key
-- KEYS[3..3] (optional) the index set of the family's filled keys
-- ARGV[1] seenVersion  the version seen at the miss
-- ARGV[2] value
-- ARGV[3] ttlSeconds
-- Returns 1 when stored, 0 when an invalidation came in between.
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if KEYS[3] then
  redis.call('SADD', KEYS[3], KEYS[1])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
return 1
