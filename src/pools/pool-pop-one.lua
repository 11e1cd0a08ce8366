-- KEYS[1] pool      the pool list
-- KEYS[2] consumed  the consumed list (items waiting to be marked in the DB)
-- KEYS[3..4] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--   or UNCHECKED error and no pop unless the first is absent and the second holds the last ARGV
-- ARGV[1..1] (with KEYS[3]) the state the caller's credential carries
-- The AOFBUSY error and no pop while Redis's background fsync runs: it would answer before it
--   wrote the pop to its AOF (aof-guard.ts).
-- Moves one item (FIFO) into the consumed list with one LMOVE (the pool's tail to the consumed
-- list's head: RPOP and LPUSH in one command, so Redis writes one command to its AOF and replicas
-- rather than MULTI, RPOP, LPUSH, EXEC). Returns one JSON text, `[item,length]` (the item
-- as stored, a JSON object, and the pool's length after the pop), or `[length]` when the pool is
-- empty: the caller decodes it with one JSON.parse (pool-lists.ts).
{{revocationGuard}}
{{aofGuard}}
local item = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
if not item then return '[' .. redis.call('LLEN', KEYS[1]) .. ']' end
return '[' .. item .. ',' .. redis.call('LLEN', KEYS[1]) .. ']'
