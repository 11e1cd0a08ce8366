-- KEYS[1] bucket  the IP's bucket hash
-- ARGV[1] ipId
-- ARGV[2] from    the task id the chain should be at
-- ARGV[3] next    its successor
-- Returns 'advanced' (was from, now next), 'already' (was next already), 'none' (no entry),
-- or 'stale:<current>' (the chain belongs to another task).
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 'advanced'
elseif cur == ARGV[3] then
  return 'already'
elseif not cur then
  return 'none'
end
return 'stale:' .. cur
