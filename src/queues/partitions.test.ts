import { describe, expect, it } from 'vitest';
import { parseShardSpec } from '../config/shard-spec.js';
import { keySlot, SLOTS } from '../redis/key-slot.js';
import { partitionOf, partitionTag } from './partitions.js';

describe('queue partitions', () => {
  it('computes Redis Cluster slots as Redis does for the keys the platform builds', () => {
    // CLUSTER KEYSLOT values from Redis's documentation.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    // Read from a Redis 7.0 `CLUSTER KEYSLOT` (an empty {} makes the whole key count).
    expect(keySlot('{}x')).toBe(10595);
    expect(keySlot('wp:{crawl:3}:crawl.3:wait')).toBe(2037);
    expect(keySlot('{wp:crawl:3}:crawl.3:wait')).toBe(keySlot('wp:crawl:3'));
  });

  it('puts a business key in the same partition every time, and spreads keys evenly', () => {
    expect(partitionOf(42, 6)).toBe(partitionOf(42, 6));
    expect(partitionOf('42', 6)).toBe(partitionOf('42', 6));
    expect(partitionOf(43, 6)).toBe((partitionOf(42, 6) + 1) % 6); // ids in sequence take turns
    expect(partitionOf('example.com', 1)).toBe(0);
    const counts = new Array(6).fill(0);
    for (let ip = 1; ip <= 60_000; ip++) counts[partitionOf(ip, 6)]++;
    for (const n of counts) expect(Math.abs(n - 10_000)).toBeLessThan(600);
    const domains = new Array(3).fill(0);
    for (let i = 0; i < 3_000; i++) domains[partitionOf(`feeds${i}.example.com`, 3)]++;
    for (const n of domains) expect(Math.abs(n - 1_000)).toBeLessThan(150);
  });

  it('gives partition i of n a tag whose slot lies in the i-th n-th of the slot space', () => {
    for (const n of [1, 2, 3, 6, 12]) {
      const tags = Array.from({ length: n }, (_, i) => partitionTag('wp:crawl', i, n));
      expect(new Set(tags).size).toBe(n);
      tags.forEach((tag, i) => {
        const slot = keySlot(`{${tag}}:crawl:wait`);
        expect(slot).toBeGreaterThanOrEqual(Math.floor((i * SLOTS) / n));
        expect(slot).toBeLessThan(Math.floor(((i + 1) * SLOTS) / n));
      });
    }
    // Stable: the same tag for the same partition and count.
    expect(partitionTag('wp:feeds', 4, 6)).toBe(partitionTag('wp:feeds', 4, 6));
  });

  it('reads which partitions a worker takes', () => {
    expect(parseShardSpec('all', 4)).toEqual([0, 1, 2, 3]);
    expect(parseShardSpec('', 2)).toEqual([0, 1]);
    expect(parseShardSpec('0-2, 5', 6)).toEqual([0, 1, 2, 5]);
    expect(parseShardSpec('3,1,1', 6)).toEqual([1, 3]);
    expect(() => parseShardSpec('6', 6)).toThrow(/partition 6 does not exist \(QUEUE_SHARDS is 6: 0-5\)/);
    expect(() => parseShardSpec('3-1', 6)).toThrow(/ends before it starts/);
    expect(() => parseShardSpec('a-b', 6)).toThrow(/not a partition or a range/);
  });
});
