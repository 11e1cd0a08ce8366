/**
 * Helpers of the queue-partition tests (QUEUE_SHARDS on a Redis Cluster): session ids that cover
 * every persist buffer, and a census of the queue keys on each master (the stand-in crawler is in
 * stand-in-crawler.ts).
 */
import { Redis } from 'ioredis';
import { sessionHash } from '../../src/messages/session-hash.js';
import type { QueueFamily, QueueTarget } from '../../src/queues/layout.js';

/** Session ids whose persist buffers (sessionHash % shards) cover every buffer, `perShard` each. */
export function sessionsCoveringShards(shards: number, perShard: number): string[] {
  const byShard = new Map<number, string[]>();
  for (let n = 0; byShard.size < shards || [...byShard.values()].some((s) => s.length < perShard); n++) {
    const id = `qp-session-${n}`;
    const shard = sessionHash(id) % shards;
    const list = byShard.get(shard) ?? [];
    if (list.length < perShard) byShard.set(shard, [...list, id]);
  }
  return [...byShard.values()].flat();
}

export interface KeyCensus {
  /** Per queue: the masters (ports) and slots its keys were found on, and how many keys. */
  where: Map<QueueTarget, { masters: Set<number>; slots: Set<number>; keys: number }>;
  /** Per family and master (port): how many queue keys. */
  perFamily: Map<QueueFamily, Map<number, number>>;
  /** Keys that are neither the platform's own (`<prefix>:...`) nor a key of one of `targets`. */
  stray: string[];
}

/**
 * Every key on each master (SCAN on a plain connection to the node), each one's slot as the node
 * computes it (CLUSTER KEYSLOT), sorted into the queues of `targets` by their BullMQ prefix and name.
 */
export async function queueKeyCensus(ports: number[], targets: QueueTarget[], platformPrefix: string): Promise<KeyCensus> {
  const census: KeyCensus = { where: new Map(), perFamily: new Map(), stray: [] };
  const targetOf = (key: string) => targets.find((t) => key.startsWith(`${t.prefix}:${t.name}:`));
  for (const port of ports) {
    const node = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
    node.on('error', () => undefined);
    try {
      await node.connect();
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
        cursor = next;
        found.push(...batch);
      } while (cursor !== '0');
      const replies = (await node.pipeline(found.map((k) => ['cluster', 'keyslot', k])).exec())!;
      found.forEach((key, n) => {
        if (key.startsWith(`${platformPrefix}:`)) return; // the platform's own keys (pools, items, sessions, ...)
        const t = targetOf(key);
        if (!t) {
          census.stray.push(`${key} (on ${port})`);
          return;
        }
        const [err, slot] = replies[n]!;
        if (err) throw err;
        const w = census.where.get(t) ?? { masters: new Set<number>(), slots: new Set<number>(), keys: 0 };
        w.masters.add(port);
        w.slots.add(Number(slot));
        w.keys++;
        census.where.set(t, w);
        const family = census.perFamily.get(t.family) ?? new Map<number, number>();
        family.set(port, (family.get(port) ?? 0) + 1);
        census.perFamily.set(t.family, family);
      });
    } finally {
      node.disconnect();
    }
  }
  return census;
}
