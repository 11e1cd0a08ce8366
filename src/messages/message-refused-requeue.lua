-- KEYS[1] refused  a buffer's refused list (each element {"entry","error"} JSON)
-- KEYS[2] buffer   the buffer
-- ARGV (none)
-- Puts every refused entry back into the buffer, in order. Returns how many went back.
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local moved = 0
for _, item in ipairs(items) do
  local ok, d = pcall(cjson.decode, item)
  if ok and type(d) == 'table' and type(d.entry) == 'string' then
    redis.call('RPUSH', KEYS[2], d.entry)
    moved = moved + 1
    redis.call('LREM', KEYS[1], 1, item)
  end
end
return moved
