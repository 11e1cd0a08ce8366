-- KEYS[1] lease       the leader's lease (task `cluster`)
-- KEYS[2] config      the published config
-- KEYS[3] version     its version counter
-- ARGV[1] leaseValue  the leader's lease value
-- ARGV[2] body        a JSON object without "version"
-- ARGV[3] ttlMs
-- Publishes a new version: INCR of the counter and the config carrying that version, together.
-- Returns the new version, or -1 when ARGV[1] does not hold the lease.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local version = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[2], '{"version":' .. version .. ',' .. string.sub(ARGV[2], 2), 'PX', ARGV[3])
return version
