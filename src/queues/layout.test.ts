import { describe, expect, it } from 'vitest';
import { partitionKeyOf, queueKeys, queueList, queues } from './definitions.js';
import { isPartitioned, QueueLayout } from './layout.js';
import { keySlot, SLOTS } from '../redis/key-slot.js';
import { partitionOf, partitionTag } from './partitions.js';

const names = (ts: { name: string; prefix: string }[]) => ts.map((t) => `${t.prefix}:${t.name}`);
/** Queues of partitioned families (crawl, crawl-result, feed-refresh, message-persist), and the whole ones. */
const PARTITIONED = queueKeys.filter(isPartitioned).length;
const WHOLE = queueKeys.length - PARTITIONED;

describe('queue layout', () => {
  it('keeps the names and the one `{prefix}` tag of the platform before partitions on a single Redis with one partition', () => {
    const layout = QueueLayout.single('wp');
    for (const def of queueList) {
      const [t, ...rest] = layout.all().filter((x) => x.name === def.name);
      expect(rest).toEqual([]);
      expect(t).toMatchObject({ name: def.name, prefix: '{wp}', partition: 0, count: 1, current: true });
    }
    expect(layout.all()).toHaveLength(queueList.length);
    expect(layout.targetFor('crawl', 12345)).toBe(layout.target('crawl', 0));
    // One partition needs no business key, also for a partitioned family.
    expect(layout.targetFor('feedRefresh')).toMatchObject({ name: 'feed-refresh', prefix: '{wp}' });
    expect(layout.draining('crawl')).toEqual([]);
  });

  it('gives each family its own hash tag on a Redis Cluster with one partition, names unchanged', () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 1 });
    const prefixOf = (name: string) => layout.all().find((t) => t.name === name)!.prefix;
    expect(prefixOf('crawl')).toBe('{wp:crawl}');
    expect(prefixOf('crawl-result')).toBe('{wp:crawl}'); // a flow's parent and child: one slot
    expect(prefixOf('feed-refresh')).toBe('{wp:feeds}');
    expect(prefixOf('message-persist')).toBe('{wp:messages}');
    expect(prefixOf('pool-refill')).toBe('{wp:pools}');
    expect(prefixOf('pool-consumed')).toBe('{wp:pools}');
    expect(prefixOf('maintenance')).toBe('{wp:maintenance}');
    expect(layout.all().map((t) => t.name)).toEqual(queueList.map((q) => q.name));
  });

  it('splits the hot families into `<name>.<i>-of-<n>` partitions with tags spread over the slot space; pools and maintenance stay whole', () => {
    for (const cluster of [false, true]) {
      const layout = new QueueLayout({ prefix: 'wp', cluster, shards: 6 });
      expect(names(layout.current('crawl'))).toEqual(Array.from({ length: 6 }, (_, i) => `{${partitionTag('wp:crawl', i, 6)}}:crawl.${i}-of-6`));
      expect(names(layout.current('crawlResult'))).toEqual(Array.from({ length: 6 }, (_, i) => `{${partitionTag('wp:crawl', i, 6)}}:crawl-result.${i}-of-6`));
      expect(layout.current('feedRefresh').map((t) => t.prefix)).toEqual(Array.from({ length: 6 }, (_, i) => `{${partitionTag('wp:feeds', i, 6)}}`));
      expect(layout.current('messagePersist').map((t) => t.name)).toEqual(Array.from({ length: 6 }, (_, i) => `message-persist.${i}-of-6`));
      layout.current('messagePersist').forEach((t, i) => {
        const slot = keySlot(`${t.prefix}:${t.name}:wait`);
        expect(slot).toBeGreaterThanOrEqual(Math.floor((i * SLOTS) / 6));
        expect(slot).toBeLessThan(Math.floor(((i + 1) * SLOTS) / 6));
      });
      expect(names(layout.current('poolRefill'))).toEqual([cluster ? '{wp:pools}:pool-refill' : '{wp}:pool-refill']);
      expect(names(layout.current('maintenance'))).toEqual([cluster ? '{wp:maintenance}:maintenance' : '{wp}:maintenance']);
      // Every queue once: each partitioned one × 6, each whole one once.
      expect(new Set(names(layout.all())).size).toBe(PARTITIONED * 6 + WHOLE);
      expect(layout.all()).toHaveLength(PARTITIONED * 6 + WHOLE);
    }
    expect(isPartitioned('crawlResult')).toBe(true);
    expect(isPartitioned('poolConsumed')).toBe(false);
    expect(queues.crawlResult.family).toBe(queues.crawl.family);
  });

  it('puts a business key in the same partition every time, and asks for a key where one is needed', () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 6 });
    for (const ip of [1, 2, 6, 7, 1234567]) {
      const t = layout.targetFor('crawl', ip);
      expect(t.partition).toBe(partitionOf(ip, 6));
      expect(layout.targetFor('crawl', ip)).toBe(t); // the same object: built once
      expect(new QueueLayout({ prefix: 'wp', cluster: true, shards: 6 }).targetFor('crawl', ip)).toEqual(t); // and by another process
      expect(layout.targetFor('crawlResult', ip).prefix).toBe(t.prefix);
    }
    expect(layout.targetFor('feedRefresh', 'example.com').partition).toBe(partitionOf('example.com', 6));
    expect(() => layout.targetFor('crawl')).toThrow(/queue crawl is partitioned: a partition key is needed/);
    expect(layout.targetFor('poolRefill')).toBe(layout.targetFor('poolRefill', 99));
    // What an operator's job carries decides its partition.
    expect(partitionKeyOf('crawl', { ipId: 7, keyword: 'k', taskId: 'x', pagesOnSale: 1, pagesSold: 1 })).toBe(7);
    expect(partitionKeyOf('crawlResult', { ipId: 8, taskId: 'x' })).toBe(8);
    expect(partitionKeyOf('feedRefresh', { feedId: 3, trigger: 'manual' })).toBe(3);
    expect(partitionKeyOf('messagePersist', {})).toBe(0);
    expect(partitionKeyOf('messagePersist', { shard: 5 })).toBe(5);
    expect(partitionKeyOf('poolRefill', { kind: 'refill', type: 'titles', groupId: 1 })).toBeUndefined();
  });

  it('finds a key in its current partition first, then in its partition of each older layout; adds only to the current one', () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 3, older: [6, 3, 12, 6] });
    expect(layout.older).toEqual([6, 12]); // its own count and repeats dropped, in order
    const c = layout.candidates('crawl', 7);
    expect(c.map((t) => [t.name, t.count, t.current])).toEqual([
      ['crawl.1-of-3', 3, true],
      ['crawl.1-of-6', 6, false],
      ['crawl.7-of-12', 12, false],
    ]);
    expect(c[0]!.prefix).not.toBe(c[1]!.prefix); // one partition index in two layouts: different keys and names
    expect(c[0]!.name).not.toBe(c[1]!.name);
    expect(layout.targetFor('crawl', 7)).toBe(c[0]);
    // Without a key (or for a whole family): every queue, current ones first.
    expect(layout.candidates('crawl', undefined)).toEqual(layout.everywhere('crawl'));
    expect(layout.everywhere('crawl').map((t) => t.current)).toEqual([...Array(3).fill(true), ...Array(18).fill(false)]);
    expect(layout.candidates('maintenance', 7)).toEqual(layout.current('maintenance'));
  });

  it('lists the partitions of older layouts as draining, for the hot families only', () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 3, older: [6] });
    const draining = layout.draining('feedRefresh');
    expect(draining.map((t) => [t.name, t.count, t.current])).toEqual(Array.from({ length: 6 }, (_, i) => [`feed-refresh.${i}-of-6`, 6, false]));
    expect(draining.map((t) => t.prefix)).toEqual(Array.from({ length: 6 }, (_, i) => `{${partitionTag('wp:feeds', i, 6)}}`));
    expect(layout.draining('poolConsumed')).toEqual([]);
    expect(layout.all()).toHaveLength(PARTITIONED * 3 + PARTITIONED * 6 + WHOLE);
    // From one partition to several: the old single queue (no suffix, the family tag) drains.
    const fromOne = new QueueLayout({ prefix: 'wp', cluster: true, shards: 6, older: [1] });
    expect(names(fromOne.draining('crawl'))).toEqual(['{wp:crawl}:crawl']);
    expect(names(new QueueLayout({ prefix: 'wp', cluster: false, shards: 6, older: [1] }).draining('crawl'))).toEqual(['{wp}:crawl']);
  });

  it('never puts a queue of one layout in another layout: partitions of different counts have different keys', () => {
    const counts = [2, 3, 4, 6, 12];
    for (const prefix of ['wp', 'other']) {
      const layout = new QueueLayout({ prefix, cluster: true, shards: 1, older: counts });
      const all = layout.all().map((t) => `${t.prefix}:${t.name}`);
      expect(new Set(all).size, prefix).toBe(all.length);
      expect(all).toHaveLength(WHOLE + PARTITIONED + PARTITIONED * counts.reduce((a, b) => a + b, 0));
      // The spread over the slot space holds for every count.
      for (const n of counts) {
        layout
          .draining('feedRefresh')
          .filter((t) => t.count === n)
          .forEach((t) => {
            expect(keySlot(t.prefix)).toBeGreaterThanOrEqual(Math.floor((t.partition * SLOTS) / n));
            expect(keySlot(t.prefix)).toBeLessThan(Math.floor(((t.partition + 1) * SLOTS) / n));
          });
      }
    }
  });

  it('consumes the partitions named by WORKER_SHARDS of the current layout, and every partition of an older one', () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 6, consumed: [0, 1, 4], older: [3] });
    expect(layout.consumed('crawl').map((t) => [t.name, t.count])).toEqual([
      ['crawl.0-of-6', 6],
      ['crawl.1-of-6', 6],
      ['crawl.4-of-6', 6],
      ['crawl.0-of-3', 3],
      ['crawl.1-of-3', 3],
      ['crawl.2-of-3', 3],
    ]);
    // A family that is not partitioned is consumed whole whatever WORKER_SHARDS says.
    expect(names(layout.consumed('poolRefill'))).toEqual(['{wp:pools}:pool-refill']);
    // By default every partition.
    expect(new QueueLayout({ prefix: 'wp', cluster: true, shards: 6 }).consumed('messagePersist')).toHaveLength(6);
  });

  it("puts a job's sibling in the same partition of the same layout (a crawl's result beside its crawl)", () => {
    const layout = new QueueLayout({ prefix: 'wp', cluster: true, shards: 3, older: [6] });
    const old = layout.target('crawl', 5, 6);
    expect(old.current).toBe(false);
    const sibling = layout.sibling(old, 'crawlResult');
    expect(sibling).toMatchObject({ key: 'crawlResult', name: 'crawl-result.5-of-6', count: 6, partition: 5, prefix: old.prefix, current: false });
    const now = layout.targetFor('crawl', 4);
    expect(layout.sibling(now, 'crawlResult')).toBe(layout.targetFor('crawlResult', 4));
  });
});
