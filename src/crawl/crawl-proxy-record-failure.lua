-- KEYS[1] breaker       the breaker hash
-- ARGV[1] fingerprint   of PROXY_LIST (another list resets the state)
-- ARGV[2] threshold     consecutive failures before a switch
-- ARGV[3] nowMs
-- ARGV[4] leaseMs       the switch lease
-- ARGV[5] canSwitch     1 when there is another proxy to switch to
-- Counts a failure. Returns {failures, 1 when the caller must health-check and switch, else 0}.
local k = KEYS[1]
if redis.call('HGET', k, 'list') ~= ARGV[1] then
  redis.call('DEL', k)
  redis.call('HSET', k, 'list', ARGV[1], 'index', 0, 'failures', 0, 'switches', 0)
end
local failures = redis.call('HINCRBY', k, 'failures', 1)
if ARGV[5] ~= '1' or failures < tonumber(ARGV[2]) then return {failures, 0} end
local now = tonumber(ARGV[3])
if now < tonumber(redis.call('HGET', k, 'cooldownUntil') or '0') then return {failures, 0} end
if now < tonumber(redis.call('HGET', k, 'switchingUntil') or '0') then return {failures, 0} end
redis.call('HSET', k, 'switchingUntil', now + tonumber(ARGV[4]))
return {failures, 1}
