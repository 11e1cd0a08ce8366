-- KEYS[1] breaker     the breaker hash
-- ARGV[1] fingerprint of PROXY_LIST
-- ARGV[2] from        index switched from
-- ARGV[3] to          index switched to
-- ARGV[4] nowMs
-- ARGV[5] cooldownMs
-- Returns 1 when switched, 0 when the state moved meanwhile (list changed, or another switch).
local k = KEYS[1]
if redis.call('HGET', k, 'list') ~= ARGV[1] or (redis.call('HGET', k, 'index') or '0') ~= ARGV[2] then return 0 end
local now = tonumber(ARGV[4])
redis.call('HSET', k, 'index', ARGV[3], 'failures', 0, 'switchedAt', now, 'cooldownUntil', now + tonumber(ARGV[5]), 'switchingUntil', 0)
redis.call('HINCRBY', k, 'switches', 1)
return 1
