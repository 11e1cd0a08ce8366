-- KEYS[1] lease      the lease key
-- ARGV[1] termValue  this term's value
-- ARGV[2] ttlMs
-- Extends the lease only while it still holds this term's value. Returns 1 when renewed, 0 when
-- the lease is gone or held by another term.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
