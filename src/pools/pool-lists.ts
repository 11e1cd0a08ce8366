/**
 * The Redis side of the pools: per (type, group) a FIFO list of encoded items (LPUSH in, RPOP
 * out), the list of popped items waiting to be marked consumed in the DB, and the refill lock. Every
 * multi-key step is one Lua script (pool-scripts.ts); all keys of one pool share a hash tag.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { decodeItem, encodeItem, type PoolItem, type PoolType } from './pool-item.js';
import { popOneScript, popScript, pushScript, snapshotScript, trimConsumedScript, unlockScript } from './pool-scripts.js';

export interface PoolSnapshot {
  length: number;
  /** Ids in the pool and ids popped but not yet marked consumed in the DB. */
  ids: string[];
}

export class PoolLists {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** RPOPs up to `count` items and records them as consumed, in one round trip. */
  async pop(type: PoolType, groupId: number, count: number): Promise<{ items: PoolItem[]; remaining: number }> {
    const keys = [this.keys.pool(type, groupId), this.keys.poolConsumed(type, groupId)];
    const reply = count === 1 ? await popOneScript.run<(string | number)[]>(this.redis, keys) : await popScript.run<(string | number)[]>(this.redis, keys, [count]);
    const remaining = Number(reply.pop());
    return { items: (reply as string[]).map(decodeItem), remaining };
  }

  async length(type: PoolType, groupId: number): Promise<number> {
    return this.redis.llen(this.keys.pool(type, groupId));
  }

  /** Pool length and consumed backlog of several pools (separate commands: the pools may live in different Cluster slots). */
  async lengths(pools: { type: PoolType; groupId: number }[]): Promise<{ length: number; pendingConsumed: number }[]> {
    return Promise.all(
      pools.map(async (p) => {
        const [length, pendingConsumed] = await Promise.all([this.redis.llen(this.keys.pool(p.type, p.groupId)), this.redis.llen(this.keys.poolConsumed(p.type, p.groupId))]);
        return { length, pendingConsumed };
      }),
    );
  }

  async snapshot(type: PoolType, groupId: number): Promise<PoolSnapshot> {
    const [length, ...ids] = await snapshotScript.run<[number, ...string[]]>(this.redis, [this.keys.pool(type, groupId), this.keys.poolConsumed(type, groupId)]);
    return { length: Number(length), ids };
  }

  async acquireLock(type: PoolType, groupId: number, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.poolRefillLock(type, groupId), token, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async releaseLock(type: PoolType, groupId: number, token: string): Promise<boolean> {
    return (await unlockScript.run<number>(this.redis, [this.keys.poolRefillLock(type, groupId)], [token])) === 1;
  }

  /**
   * Pushes items (in serving order) only while `token` holds the refill lock; extends the lock.
   * Returns the new length, or undefined when the lock was lost (nothing pushed).
   */
  async pushFenced(type: PoolType, groupId: number, token: string, lockTtlMs: number, items: PoolItem[]): Promise<number | undefined> {
    const len = await pushScript.run<number>(
      this.redis,
      [this.keys.pool(type, groupId), this.keys.poolRefillLock(type, groupId)],
      [token, lockTtlMs, ...items.map(encodeItem)],
    );
    return len < 0 ? undefined : len;
  }

  /** The oldest `count` consumed items, oldest last (as LRANGE key -count -1 returns them). */
  async peekConsumed(type: PoolType, groupId: number, count: number): Promise<string[]> {
    return this.redis.lrange(this.keys.poolConsumed(type, groupId), -count, -1);
  }

  /** Removes the items read by peekConsumed once they are marked in the DB; 0 when another job did. */
  async trimConsumed(type: PoolType, groupId: number, peeked: string[]): Promise<number> {
    if (!peeked.length) return 0;
    return trimConsumedScript.run<number>(this.redis, [this.keys.poolConsumed(type, groupId)], [peeked.at(-1)!, peeked.length]);
  }
}
