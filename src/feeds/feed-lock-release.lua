-- KEYS[1] lock    the feed's lock
-- ARGV[1] holder  job id
-- Deletes the lock only when ARGV[1] holds it. Returns 1 when released.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
