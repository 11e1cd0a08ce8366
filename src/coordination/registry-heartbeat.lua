-- KEYS[1] index            ZSET id -> lastSeen
-- KEYS[2] details          the instance's details
-- KEYS[3] membershipIndex  SET of the queue sets in use
-- KEYS[4..] the sets of the queues the instance consumes
-- ARGV[1] id
-- ARGV[2] ttlMs
-- ARGV[3] details          JSON
-- Writes the details with their TTL and the lastSeen scores (Redis time); returns the lastSeen written (ms).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
for i = 4, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[1])
  redis.call('SADD', KEYS[3], KEYS[i])
end
return now
