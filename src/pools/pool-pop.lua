-- KEYS[1] pool      the pool list
-- KEYS[2] consumed  the consumed list (items waiting to be marked in the DB)
-- KEYS[3..4] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--   or UNCHECKED error and no pop unless the first is absent and the second holds the last ARGV
-- ARGV[1] count  how many items to pop
-- ARGV[2..2] (with KEYS[3]) the state the caller's credential carries
-- The AOFBUSY error and no pop while Redis's background fsync runs: it would answer before it
--   wrote the pop to its AOF (aof-guard.ts).
-- Returns one JSON text, `[item,item,...,length]` (the items as stored, oldest first, and the
-- pool's length after the pop), or `[length]` when the pool is empty (see pool-pop-one.lua). The
-- items are LPUSHed in pop order, so the consumed list is drained from its right end oldest first.
{{revocationGuard}}
{{aofGuard}}
local items = redis.call('RPOP', KEYS[1], ARGV[1])
if not items then return '[' .. redis.call('LLEN', KEYS[1]) .. ']' end
redis.call('LPUSH', KEYS[2], unpack(items))
return '[' .. table.concat(items, ',') .. ',' .. redis.call('LLEN', KEYS[1]) .. ']'
