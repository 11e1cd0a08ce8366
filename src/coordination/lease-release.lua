-- KEYS[1] lease      the lease key
-- ARGV[1] termValue  this term's value
-- Deletes the lease only while it still holds this term's value. Returns 1 when released, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
