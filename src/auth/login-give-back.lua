-- KEYS[1] address  failed attempts from one client address
-- KEYS[2] pair     failed attempts of one (user name, client address) (same slot)
-- ARGV (none)
-- Takes one attempt back from both counts (a successful login, or an attempt whose password was
-- not checked after all); never below zero.
for _, key in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', key) or '0')
  if n > 0 then redis.call('DECR', key) end
end
return 1
