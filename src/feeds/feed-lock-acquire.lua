-- KEYS[1] lock    the feed's lock
-- ARGV[1] holder  job id
-- ARGV[2] ttlMs
-- Takes the lock (or extends it when ARGV[1] holds it already). Returns {1, holder} when ARGV[1]
-- holds the lock now, {0, holder} when another job does.
local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, ARGV[1]}
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, current}
end
return {0, current}
