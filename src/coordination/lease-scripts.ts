/**
 * The Lua scripts of a lease. The value of a lease key is "<instance id>#<fencing token>", so
 * a renewal or release only acts on the term it was issued for.
 */
import { RedisScript } from '../redis/script.js';

/**
 * Takes the lease when it is free (or still holds the value of this process's previous term)
 * and issues the next fencing token.
 *
 * KEYS[1] lease key, KEYS[2] token counter (same slot)
 * ARGV[1] instance id, ARGV[2] TTL ms, ARGV[3] this process's previous value ('' if none)
 * Returns {1, token} when taken, {0, PTTL of the holder} otherwise.
 */
export const acquireLease = new RedisScript(
  'lease-acquire',
  `-- KEYS[1] lease, KEYS[2] token counter; ARGV[1] instance id, ARGV[2] ttl ms, ARGV[3] previous own value
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[3] then
  return {0, redis.call('PTTL', KEYS[1])}
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return {1, token}
`,
);

/**
 * Extends the lease only while it still holds this term's value.
 *
 * KEYS[1] lease key
 * ARGV[1] this term's value, ARGV[2] TTL ms
 * Returns 1 when renewed, 0 when the lease is gone or held by another term.
 */
export const renewLease = new RedisScript(
  'lease-renew',
  `-- KEYS[1] lease; ARGV[1] term value, ARGV[2] ttl ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`,
);

/**
 * Deletes the lease only while it still holds this term's value.
 *
 * KEYS[1] lease key
 * ARGV[1] this term's value
 * Returns 1 when released, 0 otherwise.
 */
export const releaseLease = new RedisScript(
  'lease-release',
  `-- KEYS[1] lease; ARGV[1] term value
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
);

/** The value a term writes into its lease. */
export function leaseValue(instanceId: string, token: number): string {
  return `${instanceId}#${token}`;
}

/** The holder of a lease value ("<instance>#<token>"). */
export function parseLeaseValue(value: string | null): { instanceId: string; token: number } | null {
  if (!value) return null;
  const at = value.lastIndexOf('#');
  if (at < 0) return { instanceId: value, token: 0 };
  return { instanceId: value.slice(0, at), token: Number(value.slice(at + 1)) };
}
