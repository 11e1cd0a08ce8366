-- KEYS[1] list  the session's list
-- KEYS[2..3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--   or UNCHECKED error and no write unless the first is absent and the second holds the last ARGV
-- ARGV[1] entry
-- ARGV[2] ttlSeconds
-- ARGV[3] maxLength
-- ARGV[4..4] (with KEYS[2]) the state the caller's credential carries
-- RPUSH + EXPIRE + LTRIM. Returns the list length before the trim.
{{revocationGuard}}
local len = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
return len
