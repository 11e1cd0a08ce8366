/**
 * Where each queue's keys live (QUEUE_SHARDS, docs/queue-partitions.md). Pure: no Redis.
 *
 * - Families (FAMILIES, src/queues/declare-queue.ts; each queue names its own): `crawl` (queues
 *   crawl and crawl-result: a flow's parent and child share a slot), `feeds` (feed-refresh),
 *   `messages` (message-persist), `pools` (pool-refill, pool-consumed), `maintenance`. The first
 *   three are the hot ones and are partitioned.
 * - One partition (QUEUE_SHARDS=1, the default): a family's queues keep their names; their prefix
 *   is `{<prefix>}` on a single Redis (where nothing moves from before partitions existed) and
 *   `{<prefix>:<family>}` on a Redis Cluster, so that families land on different masters.
 * - n partitions: partition i of a hot family is queue `<name>.<i>-of-<n>` (Bull Board groups by the `.`; the count in the name keeps the names of two layouts apart while one drains)
 *   with prefix `{partitionTag('<prefix>:<family>', i, n)}`, a tag whose slot lies in the i-th n-th
 *   of the slot space: n partitions over m masters put n/m on each.
 * - A job's partition is a stable function of its business key, which its queue's declaration
 *   reads from the payload (`partitionKey`): an IP's id for its crawls and their results, a feed's
 *   id for its refreshes, a persist buffer's shard for its drains.
 * - Older layouts (the QUEUE_SHARDS of processes before a change) are recorded in Redis; their
 *   partitions are still consumed and searched until they are empty ("drained"), and nothing new
 *   is added to them.
 */
import { queueKeys, queues as definitions, type QueueKey } from './definitions.js';
import { FAMILIES, type PartitionKey, type QueueFamily } from './declare-queue.js';
import { partitionOf, partitionTag } from './partitions.js';

export type { PartitionKey, QueueFamily } from './declare-queue.js';

export const PARTITIONED_FAMILIES: ReadonlySet<QueueFamily> = new Set((Object.keys(FAMILIES) as QueueFamily[]).filter((f) => FAMILIES[f].partitioned));

export function isPartitioned(key: QueueKey): boolean {
  return PARTITIONED_FAMILIES.has(definitions[key].family);
}

/** One BullMQ queue of the layout: the name and prefix a Queue or Worker is built with. */
export interface QueueTarget {
  key: QueueKey;
  family: QueueFamily;
  /** The BullMQ queue name (`crawl`, or `crawl.3-of-6` when partitioned). */
  name: string;
  /** The BullMQ prefix (carries the hash tag). */
  prefix: string;
  partition: number;
  /** Partitions of the layout this queue belongs to. */
  count: number;
  /** False for a partition of an older layout, drained but never added to. */
  current: boolean;
}

export interface LayoutOptions {
  /** REDIS_PREFIX. */
  prefix: string;
  /** Whether the queues run on a Redis Cluster (family hash tags). */
  cluster: boolean;
  /** QUEUE_SHARDS. */
  shards: number;
  /** The current layout's partitions this process consumes (default every one). */
  consumed?: readonly number[];
  /** Partition counts of older layouts still to drain. */
  older?: readonly number[];
}

export class QueueLayout {
  readonly shards: number;
  readonly older: readonly number[];
  private readonly consumedPartitions: readonly number[];
  private readonly cache = new Map<string, QueueTarget>();

  constructor(private readonly options: LayoutOptions) {
    this.shards = options.shards;
    this.older = [...new Set(options.older ?? [])].filter((n) => n !== options.shards).sort((a, b) => a - b);
    this.consumedPartitions = options.consumed ?? Array.from({ length: options.shards }, (_, i) => i);
  }

  /** The single-Redis layout of one partition: what the platform used before partitions. */
  static single(prefix: string): QueueLayout {
    return new QueueLayout({ prefix, cluster: false, shards: 1 });
  }

  /** Partitions of `key` in a layout of `count` (1 for families that are not partitioned). */
  private countFor(key: QueueKey, count: number): number {
    return isPartitioned(key) ? count : 1;
  }

  /** Partition `index` of `key` in the layout of `count` partitions (the current one by default). */
  target(key: QueueKey, index: number, count = this.shards): QueueTarget {
    const n = this.countFor(key, count);
    const id = `${key}/${n}/${index}`;
    let t = this.cache.get(id);
    if (!t) {
      const family = definitions[key].family;
      const base = definitions[key].name;
      const p = this.options.prefix;
      const prefix = n > 1 ? `{${partitionTag(`${p}:${family}`, index, n)}}` : this.options.cluster ? `{${p}:${family}}` : `{${p}}`;
      t = { key, family, name: n > 1 ? `${base}.${index}-of-${n}` : base, prefix, partition: index, count: n, current: n === this.countFor(key, this.shards) };
      this.cache.set(id, t);
    }
    return t;
  }

  /** The partition index of a business key in a layout of `count`. */
  partitionOf(key: QueueKey, partitionKey: PartitionKey | undefined, count = this.shards): number {
    const n = this.countFor(key, count);
    if (n === 1) return 0;
    if (partitionKey === undefined) throw new Error(`queue ${definitions[key].name} is partitioned: a partition key is needed`);
    return partitionOf(partitionKey, n);
  }

  /** Where a new job of this business key goes: its partition of the current layout. */
  targetFor(key: QueueKey, partitionKey?: PartitionKey): QueueTarget {
    return this.target(key, this.partitionOf(key, partitionKey));
  }

  /** The same partition of another queue of the family (a crawl's result beside its crawl). */
  sibling(of: QueueTarget, key: QueueKey): QueueTarget {
    return this.target(key, isPartitioned(key) ? of.partition : 0, of.count);
  }

  /** Every partition of `key` in the current layout. */
  current(key: QueueKey): QueueTarget[] {
    const n = this.countFor(key, this.shards);
    return Array.from({ length: n }, (_, i) => this.target(key, i));
  }

  /** Every partition of `key` in the older layouts (none for families that are not partitioned). */
  draining(key: QueueKey): QueueTarget[] {
    if (!isPartitioned(key)) return [];
    return this.older.flatMap((n) => Array.from({ length: n }, (_, i) => this.target(key, i, n)));
  }

  /** Every queue of `key`: the current partitions, then those of older layouts. */
  everywhere(key: QueueKey): QueueTarget[] {
    return [...this.current(key), ...this.draining(key)];
  }

  /**
   * The queues that may hold a job of this business key: its partition in the current layout
   * first, then its partition in each older layout.
   */
  candidates(key: QueueKey, partitionKey: PartitionKey | undefined): QueueTarget[] {
    if (!isPartitioned(key) || partitionKey === undefined) return this.everywhere(key);
    return [this.targetFor(key, partitionKey), ...this.older.map((n) => this.target(key, this.partitionOf(key, partitionKey, n), n))];
  }

  /** The queues a worker of this process takes jobs from: its partitions of the current layout, and every older one. */
  consumed(key: QueueKey): QueueTarget[] {
    const current = isPartitioned(key) ? this.consumedPartitions.map((i) => this.target(key, i)) : this.current(key);
    return [...current, ...this.draining(key)];
  }

  /** Every queue of every key (Bull Board, metrics, the job console). */
  all(): QueueTarget[] {
    return queueKeys.flatMap((k) => this.everywhere(k));
  }
}
