/**
 * Compare-and-delete: the one release every lock, lease and marker of the platform uses (a refill
 * lock, a feed lock, a drain lease, a leader lease, a stale deduplication key). Deletes `key` only
 * while it holds `value`, so a holder whose hold expired never deletes its successor's.
 */
import type { RedisClient } from './connection.js';
import { RedisScript } from './script.js';

const script = RedisScript.load('delete-if-equals', new URL('./delete-if-equals.lua', import.meta.url), { keys: ['key'], args: ['value'] });

/** True when the key held `value` and was deleted. */
export async function deleteIfEquals(redis: RedisClient, key: string, value: string): Promise<boolean> {
  return (await script.run<number>(redis, { key }, { value })) === 1;
}
