/**
 * The crawl chain of each IP: ipId → the task id of the IP's current link, kept in Redis hashes
 * of 100 IPs each (compact listpack encoding: ~30 bytes an IP instead of ~80 in one big hash).
 * See docs/pipeline.md#exactly-one-pending-crawl-per-active-ip.
 *
 * Moves (each one Lua script, so concurrent API calls, pipeline workers and the leader agree):
 *   claim(ip, T)          absent → T                      (new IP, activation, reconciliation)
 *   advance(ip, T, N)     T → N = nextTaskId(T)           (result processed, or T ended without one)
 *   release(ip, [T])      any (or exactly T) → absent     (deactivate, delete)
 *
 * Invariants: the entry is written BEFORE the BullMQ job is added and only its holder adds the job,
 * which keeps one pending crawl per active IP (a crash in between leaves an entry without a job:
 * reconciliation re-adds it under the same id). With REDIS_REPLICA_ACKS a claim or an advance is
 * answered only once the replicas hold it (a failover must not put the chain back a link while its
 * next job exists).
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { NO_REPLICA_ACK, type ReplicaAck } from '../redis/replica-ack.js';
import { RedisScript } from '../redis/script.js';

const BUCKET_SIZE = 100;

/** claim: absent → T, for many IPs at once (crawl-chain-claim.lua). */
const claimMany = RedisScript.load('crawl-chain-claim', new URL('./crawl-chain-claim.lua', import.meta.url), { keys: ['buckets'], args: [] });

/** advance: T → N (crawl-chain-advance.lua). */
const advanceScript = RedisScript.load('crawl-chain-advance', new URL('./crawl-chain-advance.lua', import.meta.url), {
  keys: ['bucket'],
  args: ['ipId', 'from', 'next'],
});

/** release: any (or exactly T) → absent (crawl-chain-release.lua). */
const releaseScript = RedisScript.load('crawl-chain-release', new URL('./crawl-chain-release.lua', import.meta.url), {
  keys: ['bucket'],
  args: ['ipId', 'expected'],
});

export type AdvanceOutcome = { kind: 'advanced' | 'already' | 'none' } | { kind: 'stale'; current: string };

export const chainBucket = (ipId: number) => Math.floor(ipId / BUCKET_SIZE);

export class CrawlChain {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    /** With REDIS_REPLICA_ACKS, claims and advances wait for the replicas (a failover must not undo them). */
    private readonly replicaAck: ReplicaAck = NO_REPLICA_ACK,
  ) {}

  private key(ipId: number): string {
    return this.keys.crawlChain(chainBucket(ipId));
  }

  async current(ipId: number): Promise<string | undefined> {
    return (await this.redis.hget(this.key(ipId), String(ipId))) ?? undefined;
  }

  /** Every entry (one round trip for the bucket list, one pipelined round trip for the buckets). */
  async all(): Promise<Map<number, string>> {
    const buckets = await this.redis.smembers(this.keys.crawlChainBuckets());
    const out = new Map<number, string>();
    if (!buckets.length) return out;
    const pipeline = this.redis.pipeline();
    for (const b of buckets) pipeline.hgetall(this.keys.crawlChain(Number(b)));
    for (const [err, hash] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      for (const [ip, task] of Object.entries(hash as Record<string, string>)) out.set(Number(ip), task);
    }
    return out;
  }

  async size(): Promise<number> {
    const buckets = await this.redis.smembers(this.keys.crawlChainBuckets());
    if (!buckets.length) return 0;
    const pipeline = this.redis.pipeline();
    for (const b of buckets) pipeline.hlen(this.keys.crawlChain(Number(b)));
    return ((await pipeline.exec()) ?? []).reduce((n, [, len]) => n + Number(len ?? 0), 0);
  }

  /** Claims the chain of each IP that has none. Returns ipId → {taskId, claimed}. */
  async claim(candidates: readonly { ipId: number; taskId: string }[]): Promise<Map<number, { taskId: string; claimed: boolean }>> {
    const out = new Map<number, { taskId: string; claimed: boolean }>();
    if (!candidates.length) return out;
    const buckets = this.keys.crawlChainBuckets();
    const reply = await this.replicaAck.write(this.redis, buckets, () =>
      claimMany.run<string[]>(
        this.redis,
        { buckets },
        {},
        {
          keys: candidates.map((c) => this.key(c.ipId)),
          args: [...candidates.flatMap((c) => [c.ipId, c.taskId]), candidates.map((c) => chainBucket(c.ipId)).join(',')],
        },
      ),
    );
    candidates.forEach((c, i) => {
      const r = reply[i]!;
      out.set(c.ipId, r.startsWith('=') ? { taskId: r.slice(1), claimed: false } : { taskId: r, claimed: true });
    });
    return out;
  }

  async advance(ipId: number, from: string, next: string): Promise<AdvanceOutcome> {
    const bucket = this.key(ipId);
    const r = await this.replicaAck.write(this.redis, bucket, () => advanceScript.run<string>(this.redis, { bucket }, { ipId, from, next }));
    if (r.startsWith('stale:')) return { kind: 'stale', current: r.slice('stale:'.length) };
    return { kind: r as 'advanced' | 'already' | 'none' };
  }

  /** Removes the entry (only when it is `expected`, if given). Returns the task id removed. */
  async release(ipId: number, expected?: string): Promise<string | undefined> {
    return (await releaseScript.run<string | null>(this.redis, { bucket: this.key(ipId) }, { ipId, expected: expected ?? '' })) ?? undefined;
  }
}
