-- KEYS[1] state       a credential's state
-- ARGV[1] newState    the new state "<number>[:<flag>]"
-- ARGV[2] ttlSeconds  seconds to keep it (0: no expiry)
-- Stores the new state when there is none or its number is higher, or equal over a state with no
-- flag where the new one has one (a user state of an earlier release, "<version>", gets its role);
-- returns the state held now.
local function number(s) return tonumber(string.match(s, '^(%d+)')) or -1 end
local current = redis.call('GET', KEYS[1])
if current then
  local new, held = number(ARGV[1]), number(current)
  local upgrade = new == held and not string.find(current, ':', 1, true) and string.find(ARGV[1], ':', 1, true)
  if new < held or (new == held and not upgrade) then return current end
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return ARGV[1]
