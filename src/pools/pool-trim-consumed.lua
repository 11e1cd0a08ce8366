-- KEYS[1] consumed  the consumed list
-- ARGV[1] oldest    the oldest item the job read (LRANGE key -n -1, last element)
-- ARGV[2] count     n, how many it read
-- Returns n when the n oldest items were removed, 0 when the list's old end is no longer that
-- item (another marking job removed them first: pops only add at the other end).
if redis.call('LINDEX', KEYS[1], -1) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
return tonumber(ARGV[2])
