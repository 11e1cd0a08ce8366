-- KEYS[1] pool   the pool list
-- KEYS[2] lock   the refill lock
-- ARGV[1] token  the refill's lock token
-- ARGV[2] lockTtlMs
-- ARGV[3..] the items, first to be popped first
-- Pushes only while ARGV[1] holds the lock (fencing), and extends the lock. Returns the new pool
-- length, or -1 (nothing pushed) when the lock is not held by ARGV[1].
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local len = redis.call('LLEN', KEYS[1])
local i = 3
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  len = redis.call('LPUSH', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
return len
