/**
 * Lua scripts of the pools. Every key one script touches shares the pool's hash tag
 * ({type:group}, see src/redis/keys.ts), so each runs atomically in one slot of a Cluster too.
 * Items are encoded by pool-item.ts with the id first; ID_PATTERN reads it without decoding.
 */
import { revocationGuardLua } from '../revocation/revocation.js';
import { RedisScript } from '../redis/script.js';
import { ID_PATTERN } from './pool-item.js';

/**
 * Pops one item (FIFO) and records it in the consumed list, atomically (the hot path of pop).
 * The item is moved as it is: no parsing here; the marking job reads the ids.
 * Both pops first check the caller's credential when given (src/revocation/revocation.ts): its logout
 * blacklist key and its state key, against the state in the last ARGV.
 */
export const popOneScript = new RedisScript(
  'pool-pop-one',
  `-- KEYS[1] pool list, KEYS[2] consumed list (items waiting to be marked in the DB),
-- KEYS[3], KEYS[4] (optional) the caller's logout blacklist key and credential state key: the
-- REVOKED or UNCHECKED error and no pop unless the first is absent and the second holds ARGV[1]
-- ARGV[1] (with KEYS[3]) the state the caller's credential carries
-- Returns {item, pool length after the pop}, or {pool length} (0) when the pool is empty.
${revocationGuardLua(3)}
local item = redis.call('RPOP', KEYS[1])
if not item then return {redis.call('LLEN', KEYS[1])} end
redis.call('LPUSH', KEYS[2], item)
return {item, redis.call('LLEN', KEYS[1])}`,
);

/** Pops up to ARGV[1] items (FIFO) and records them in the consumed list, atomically. */
export const popScript = new RedisScript(
  'pool-pop',
  `-- KEYS[1] pool list, KEYS[2] consumed list (items waiting to be marked in the DB),
-- KEYS[3], KEYS[4] (optional) the caller's logout blacklist key and credential state key: the
-- REVOKED or UNCHECKED error and no pop unless the first is absent and the second holds ARGV[2]
-- ARGV[1] how many items to pop   ARGV[2] (with KEYS[3]) the state the caller's credential carries
-- Returns {item, item, ..., pool length after the pop}, oldest item first. The items are LPUSHed
-- in pop order, so the consumed list is drained from its right end oldest first.
${revocationGuardLua(3)}
local items = redis.call('RPOP', KEYS[1], ARGV[1])
if not items then return {redis.call('LLEN', KEYS[1])} end
redis.call('LPUSH', KEYS[2], unpack(items))
items[#items + 1] = redis.call('LLEN', KEYS[1])
return items`,
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

/** Every id in the pool and in the consumed list, read at one instant (the recovery's snapshot). */
export const snapshotScript = new RedisScript(
  'pool-snapshot',
  `-- KEYS[1] pool list, KEYS[2] consumed list
-- ARGV (none)
-- Returns {pool length, id, id, ...}: the ids of the pooled items, then those of the consumed
-- items not yet marked in the DB. Read in chunks so long lists of long texts are never copied at once.
local out = {redis.call('LLEN', KEYS[1])}
for k = 1, 2 do
  local len = redis.call('LLEN', KEYS[k])
  local start = 0
  while start < len do
    for _, item in ipairs(redis.call('LRANGE', KEYS[k], start, start + 499)) do
      local id = string.match(item, '${ID_PATTERN}')
      if id then out[#out + 1] = id end
    end
    start = start + 500
  end
end
return out`,
);

/** Removes the items a marking job read (and marked) from the old end of the consumed list. */
export const trimConsumedScript = new RedisScript(
  'pool-trim-consumed',
  `-- KEYS[1] consumed list
-- ARGV[1] the oldest item the job read (LRANGE key -n -1, last element), ARGV[2] n
-- Returns n when the n oldest items were removed, 0 when the list's old end is no longer that
-- item (another marking job removed them first: pops only add at the other end).
if redis.call('LINDEX', KEYS[1], -1) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
return tonumber(ARGV[2])`,
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
