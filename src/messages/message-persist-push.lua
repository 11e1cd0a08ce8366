-- KEYS[1] buffer  the persist buffer
-- KEYS[2..3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--   or UNCHECKED error and no push unless the first is absent and the second holds the last ARGV
-- ARGV[1] message  the accepted message (JSON)
-- ARGV[2..2] (with KEYS[2]) the state the caller's credential carries
-- Returns the buffer's length after the push (1: it was empty).
{{revocationGuard}}
return redis.call('RPUSH', KEYS[1], ARGV[1])
