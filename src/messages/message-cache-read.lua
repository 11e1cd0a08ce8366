-- KEYS[1] list  the session's list
-- KEYS[2..3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--   or UNCHECKED error and no read unless the first is absent and the second holds the last ARGV
-- ARGV[1] count  how many entries (from the end)
-- ARGV[2..2] (with KEYS[2]) the state the caller's credential carries
-- Returns the newest ARGV[1] entries, oldest first.
{{revocationGuard}}
return redis.call('LRANGE', KEYS[1], -tonumber(ARGV[1]), -1)
