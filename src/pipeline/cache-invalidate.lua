-- KEYS[1] version  the version key
-- KEYS[2] target   the cache key, or the index set listing a family's keys
-- ARGV[1] targetKind         'index' when KEYS[2] is an index set ('key' otherwise)
-- ARGV[2] versionTtlSeconds
-- Bumps the version, when there is one, and deletes the cached value(s). Returns 1.
-- No version key means no reader between a miss and its fill (cache-read.lua makes one at the
-- miss), so there is no fill to stop, and none is made: a path that invalidates many IPs at once
-- (the scheduler's reconciliation) leaves no key per IP behind.
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('INCR', KEYS[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if ARGV[1] == 'index' then
  local members = redis.call('SMEMBERS', KEYS[2])
  for i = 1, #members, 500 do
    redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
  end
end
redis.call('DEL', KEYS[2])
return 1
