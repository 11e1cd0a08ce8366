-- KEYS[1] cache    the cache key
-- KEYS[2] version  its version key
-- ARGV[1] versionTtlSeconds
-- Returns {1, value} on a hit. On a miss returns {0, version}, the version the fill must still find,
-- and creates the version key ('0') when there is none: an invalidation bumps only a version that
-- exists (cache-invalidate.lua), so a reader between its miss and its fill is what makes one.
local value = redis.call('GET', KEYS[1])
if value then return {1, value} end
local version = redis.call('GET', KEYS[2])
if not version then
  version = '0'
  redis.call('SET', KEYS[2], version, 'EX', ARGV[1])
end
return {0, version}
