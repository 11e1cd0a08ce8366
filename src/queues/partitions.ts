/**
 * Queue partitions (QUEUE_SHARDS): which partition a job belongs to, and the hash tag each
 * partition's keys carry on a Redis Cluster. Pure: no Redis.
 *
 * - A job's partition is a stable function of its business key (an IP's id, a feed's domain, a
 *   session's id): FNV-1a of the key's text, modulo the partition count. The same key always lands
 *   in the same partition for a given count.
 * - Each partition's keys carry one hash tag, chosen so that the partitions' slots are spread
 *   evenly over the slot space: partition i of n takes the first tag `<base>:<i>/<n>`,
 *   `<base>:<i>/<n>.1`, `<base>:<i>/<n>.2`, ... whose slot lies in [i·16384/n, (i+1)·16384/n). A
 *   Redis Cluster assigns slots to masters in contiguous ranges, so n partitions over m masters (n
 *   a multiple of m) put n/m partitions on each master instead of leaving the spread to chance.
 * - The tag names the count: partitions of two layouts (a QUEUE_SHARDS change, where the old
 *   layout is drained beside the new one) never share a tag, so never a queue. Without it,
 *   partition 0 of 6 and partition 0 of 3 took the same first tag whenever its slot lay in both
 *   ranges (the same BullMQ queue in both layouts: an old layout that never empties).
 */
import { keySlot, SLOTS } from '../redis/key-slot.js';

/** FNV-1a (32 bit) of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The partition (0 … count-1) of a business key: a non-negative integer key (an IP, feed or
 * buffer id, handed out in sequence) modulo the count, which spreads them evenly; any other key
 * by its FNV-1a hash.
 */
export function partitionOf(key: string | number, count: number): number {
  if (count <= 1) return 0;
  if (typeof key === 'number' && Number.isSafeInteger(key) && key >= 0) return key % count;
  return fnv1a(String(key)) % count;
}

/** The hash tag of partition `index` of `count` (without braces), its slot in the index-th part of the slot space. */
export function partitionTag(base: string, index: number, count: number): string {
  const from = Math.floor((index * SLOTS) / count);
  const to = Math.floor(((index + 1) * SLOTS) / count);
  for (let salt = 0; ; salt++) {
    const tag = salt === 0 ? `${base}:${index}/${count}` : `${base}:${index}/${count}.${salt}`;
    const slot = keySlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}
