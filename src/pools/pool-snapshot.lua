-- KEYS[1] pool      the pool list
-- KEYS[2] consumed  the consumed list
-- ARGV (none)
-- Returns {pool length, id, id, ...}: the ids of the pooled items, then those of the consumed
-- items not yet marked in the DB. Read in chunks so long lists of long texts are never copied at once.
local out = {redis.call('LLEN', KEYS[1])}
for k = 1, 2 do
  local len = redis.call('LLEN', KEYS[k])
  local start = 0
  while start < len do
    for _, item in ipairs(redis.call('LRANGE', KEYS[k], start, start + 499)) do
      local id = string.match(item, '{{idPattern}}')
      if id then out[#out + 1] = id end
    end
    start = start + 500
  end
end
return out
