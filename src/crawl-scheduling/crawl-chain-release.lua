-- KEYS[1] bucket    the IP's bucket hash
-- ARGV[1] ipId
-- ARGV[2] expected  the task id the entry must hold, or '' for any
-- Returns the released task id, or false when nothing (or another task) held the entry.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur or (ARGV[2] ~= '' and cur ~= ARGV[2]) then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
return cur
