-- KEYS[1] buffer     the persist buffer
-- KEYS[2] lease      its drain lease
-- ARGV[1] token      the drain's token
-- ARGV[2] leaseMs
-- ARGV[3] batchSize
-- Returns false when another drain holds the lease; else the head batch (empty: lease dropped).
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return false end
local batch = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
if #batch == 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
end
return batch
