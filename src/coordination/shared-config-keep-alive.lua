-- KEYS[1] lease       the leader's lease (task `cluster`)
-- KEYS[2] config      the published config
-- ARGV[1] leaseValue  the leader's lease value
-- ARGV[2] digest      the digest of the config the leader computed
-- ARGV[3] ttlMs
-- Keeps the published config alive when it has the leader's digest. Returns -1 when ARGV[1] does
-- not hold the lease, 1 when the digest matched (TTL renewed), 0 when nothing is published or it
-- differs (publish then).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local current = redis.call('GET', KEYS[2])
if current and string.match(current, '"digest":"(%x+)"') == ARGV[2] then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
return 0
