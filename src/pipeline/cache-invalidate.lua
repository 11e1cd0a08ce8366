-- KEYS[1] version  the version key
-- KEYS[2] target   the cache key, or the index set listing a family's keys
-- ARGV[1] targetKind         'index' when KEYS[2] is an index set ('key' otherwise)
-- ARGV[2] versionTtlSeconds
-- Bumps the version and deletes the cached value(s). Returns 1.
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[1] == 'index' then
  local members = redis.call('SMEMBERS', KEYS[2])
  for i = 1, #members, 500 do
    redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
  end
end
redis.call('DEL', KEYS[2])
return 1
