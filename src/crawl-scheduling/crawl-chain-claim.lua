-- KEYS[1] buckets  the set of buckets in use
-- KEYS[2..] the bucket hash of each pair (KEYS[1 + i]: pair i)
-- ARGV[1..] the pairs ipId, candidate task id (ARGV[2i - 1], ARGV[2i]), then ARGV[#ARGV]: the
--   bucket number of each pair, comma-separated
-- Returns per pair: the candidate when it was claimed, else the task id already there, prefixed "=".
local out = {}
local buckets = {}
for b in string.gmatch(ARGV[#ARGV], '[^,]+') do buckets[#buckets + 1] = b end
for i = 1, (#ARGV - 1) / 2 do
  local key = KEYS[1 + i]
  local ip, task = ARGV[2 * i - 1], ARGV[2 * i]
  if redis.call('HSETNX', key, ip, task) == 1 then
    redis.call('SADD', KEYS[1], buckets[i])
    out[#out + 1] = task
  else
    out[#out + 1] = '=' .. redis.call('HGET', key, ip)
  end
end
return out
