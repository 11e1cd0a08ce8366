-- KEYS[1..] the item hashes of one batch (one IP, one hash slot)
-- ARGV[1] seenAt            when the crawl saw them (epoch ms)
-- ARGV[2] ttlOnSaleSeconds
-- ARGV[3] ttlSoldSeconds
-- ARGV[4..] status and price of each item: ARGV[3 + 2i - 1], ARGV[3 + 2i] for KEYS[i]
-- Writes a hash only when its stored last_seen is not newer, keeping first_seen. Returns the
-- number of hashes written.
local seen = tonumber(ARGV[1])
local written = 0
for i, key in ipairs(KEYS) do
  local status = ARGV[2 + 2 * i]
  local price = ARGV[3 + 2 * i]
  local stored = redis.call('HMGET', key, 'first_seen', 'last_seen')
  local last = tonumber(stored[2])
  if not last or last <= seen then
    redis.call('HSET', key, 'status', status, 'price', price, 'first_seen', stored[1] or ARGV[1], 'last_seen', ARGV[1])
    redis.call('EXPIRE', key, status == 'sold' and ARGV[3] or ARGV[2])
    written = written + 1
  end
end
return written
