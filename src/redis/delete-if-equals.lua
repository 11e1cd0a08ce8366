-- KEYS[1] key    a lock, lease or marker
-- ARGV[1] value  what it must still hold (a holder's token, a term's value, a job id)
-- Deletes the key only while it holds ARGV[1] (compare-and-delete). Returns 1 when deleted, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
