-- KEYS[1] dedup  a BullMQ deduplication key
-- ARGV[1] jobId  the finished job it should still name
-- Deletes the key only when it still names ARGV[1]. Returns 1 when deleted.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
