-- KEYS[1] lease       the leader's lease (task `cluster`)
-- KEYS[2] config      the published config
-- KEYS[3] version     its version counter
-- ARGV[1] leaseValue  the leader's lease value
-- ARGV[2] digest      the digest of the config the leader computed
-- ARGV[3] body        that config: a JSON object without "version"
-- ARGV[4] ttlMs
-- One round of the leader's publication: when the published config has the leader's digest its
-- TTL is renewed; otherwise (nothing published, or it differs) a new version is published, the
-- counter's INCR and the config carrying that version together.
-- Returns -1 when ARGV[1] does not hold the lease, 0 when the digest matched (TTL renewed), else
-- the new version.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local current = redis.call('GET', KEYS[2])
if current and string.match(current, '"digest":"(%x+)"') == ARGV[2] then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  return 0
end
local version = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[2], '{"version":' .. version .. ',' .. string.sub(ARGV[3], 2), 'PX', ARGV[4])
return version
