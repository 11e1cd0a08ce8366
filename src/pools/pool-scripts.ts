/**
 * Lua scripts of the pools. Every key one script touches shares the pool's hash tag
 * ({type:group}, see src/redis/keys.ts), so each runs atomically in one slot of a Cluster too.
 * Items are encoded by pool-item.ts with the id first; ID_PATTERN reads it without decoding.
 */
import { RedisScript } from '../redis/script.js';
import { ID_PATTERN } from './pool-item.js';

/** Pops one item (FIFO) and records its id in the consumed list, atomically (the hot path of pop). */
export const popOneScript = new RedisScript(
  'pool-pop-one',
  `-- KEYS[1] pool list, KEYS[2] consumed list (ids waiting to be marked in the DB)
-- ARGV (none)
-- Returns {pool length after the pop, item} or {0} when the pool is empty.
local item = redis.call('RPOP', KEYS[1])
if not item then return {0} end
local id = string.match(item, '${ID_PATTERN}')
if id then redis.call('LPUSH', KEYS[2], id) end
return {redis.call('LLEN', KEYS[1]), item}`,
);

/** Pops up to ARGV[1] items (FIFO) and records their ids in the consumed list, atomically. */
export const popScript = new RedisScript(
  'pool-pop',
  `-- KEYS[1] pool list, KEYS[2] consumed list (ids waiting to be marked in the DB)
-- ARGV[1] how many items to pop
-- Returns {pool length after the pop, item, item, ...}. Ids are LPUSHed in pop order, so the
-- consumed list is drained from its right end oldest first.
local items = redis.call('RPOP', KEYS[1], ARGV[1])
if not items then return {0} end
local ids = {}
for _, item in ipairs(items) do
  local id = string.match(item, '${ID_PATTERN}')
  if id then ids[#ids + 1] = id end
end
if #ids > 0 then redis.call('LPUSH', KEYS[2], unpack(ids)) end
local out = {redis.call('LLEN', KEYS[1])}
for i, item in ipairs(items) do out[i + 1] = item end
return out`,
);

/** Pushes items only while the caller still holds the refill lock (fencing), and extends the lock. */
export const pushScript = new RedisScript(
  'pool-push',
  `-- KEYS[1] pool list, KEYS[2] refill lock
-- ARGV[1] lock token, ARGV[2] lock ttl in ms, ARGV[3..] items, first to be popped first
-- Returns the new pool length, or -1 (nothing pushed) when the lock is not held by ARGV[1].
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local len = redis.call('LLEN', KEYS[1])
local i = 3
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  len = redis.call('LPUSH', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
return len`,
);

/** Every id in the pool and in the consumed list, read at one instant. */
export const snapshotScript = new RedisScript(
  'pool-snapshot',
  `-- KEYS[1] pool list, KEYS[2] consumed list
-- ARGV (none)
-- Returns {pool length, id, id, ...}: the ids of the pooled items, then the consumed ids not yet
-- marked in the DB. Read in chunks so a long pool of long texts is never copied at once.
local len = redis.call('LLEN', KEYS[1])
local out = {len}
local start = 0
while start < len do
  for _, item in ipairs(redis.call('LRANGE', KEYS[1], start, start + 499)) do
    local id = string.match(item, '${ID_PATTERN}')
    if id then out[#out + 1] = id end
  end
  start = start + 500
end
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do out[#out + 1] = id end
return out`,
);

/** Removes marked ids from the old end of the consumed list, only while they are the expected ones. */
export const trimConsumedScript = new RedisScript(
  'pool-trim-consumed',
  `-- KEYS[1] consumed list
-- ARGV[1..n] the ids read by LRANGE key -n -1 (ARGV[n] is the oldest, at the right end)
-- Returns how many ids were removed. A second marker of the same ids removes nothing more.
local removed = 0
for i = #ARGV, 1, -1 do
  if redis.call('LINDEX', KEYS[1], -1) ~= ARGV[i] then break end
  redis.call('RPOP', KEYS[1])
  removed = removed + 1
end
return removed`,
);

/** Deletes the refill lock only when it still holds the caller's token. */
export const unlockScript = new RedisScript(
  'pool-unlock',
  `-- KEYS[1] refill lock
-- ARGV[1] lock token
-- Returns 1 when the lock was released, 0 when another holder (or nobody) has it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
);
