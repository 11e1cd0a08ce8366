/**
 * The Redis Cluster slot of a key: CRC16 of its hash tag (the text between the first `{` and the
 * next `}`, when not empty), else of the whole key, modulo 16384. Computed by cluster-key-slot,
 * the function ioredis routes commands with, so the platform and its client agree on where a key
 * lives. (It differs from Redis for a key whose first tag is empty, `{}…}`: the platform builds no
 * such key, src/redis/keys.ts.)
 */
import calculateSlot from 'cluster-key-slot';

export const SLOTS = 16384;

export function keySlot(key: string): number {
  return calculateSlot(key);
}
