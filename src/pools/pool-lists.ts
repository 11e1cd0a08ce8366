/**
 * The Redis side of the pools: per (type, group) a FIFO list of encoded items (LPUSH in, RPOP
 * out), the list of popped items waiting to be marked consumed in the DB, and the refill lock. Every
 * multi-key step is one Lua script (pool-scripts.ts); all keys of one pool share a hash tag.
 *
 * Every command runs at most once: the pools' own `once` connection (src/redis/connection.ts)
 * never re-sends a command after a reconnect (a re-sent pop would take rows for a request already
 * answered, a re-sent push would queue rows twice) and has no ioredis command timeout. Instead each
 * command here has a deadline of REDIS_COMMAND_TIMEOUT_MS (src/lib/timeout.ts); past it the caller takes
 * its fallback while the command may still run. The error is a RedisNoReplyError, an outage: a
 * pool job (refill, consumed marks) that meets it is delayed without spending an attempt. Only for the pop does that matter: its late reply
 * goes to the caller's `onLate`, which puts the items back (pop-items.ts).
 */
import type { Revocation } from '../revocation/revocation.js';
import { FirstConnect } from '../redis/first-connect.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { NO_REPLICA_ACK, type ConnectionMark, type ReplicaAck, type ReplicaAckError } from '../redis/replica-ack.js';
import { withTimeout } from '../lib/timeout.js';
import { encodeItem, itemOf, type PoolItem, type PoolType } from './pool-item.js';
import { popOneScript, popScript, pushScript, snapshotScript, trimConsumedScript } from './pool-scripts.js';
import { deleteIfEquals } from '../redis/delete-if-equals.js';
import { untilAofWritable } from './aof-guard.js';
import { RedisNoReplyError } from '../redis/redis-unavailable.js';

export interface PoolSnapshot {
  length: number;
  /** Ids in the pool and ids popped but not yet marked consumed in the DB. */
  ids: string[];
}

export interface PopReply {
  /** In pop order (the first is the one that was next in the pool). */
  items: PoolItem[];
  /** Pool length after the pop. */
  remaining: number;
  /**
   * With REDIS_REPLICA_ACKS: the replicas did not confirm the pop, so a failover could bring its
   * items back into the pool (served twice). The caller must not serve them (pop-items.ts).
   */
  shortfall?: ReplicaAckError;
  /** With a shortfall: the connection the pop went to, the only one its put-back may use. */
  sentOn?: ConnectionMark;
}

/** A put-back refused because the connection is no longer the one the pop went to. */
export class ConnectionChangedError extends Error {
  constructor() {
    super('the connection changed since the pop: it may talk to a promoted replica that never saw the pop');
    this.name = 'ConnectionChangedError';
  }
}

export interface PoolListsOptions {
  /** Deadline of each command (REDIS_COMMAND_TIMEOUT_MS); a pop's wait for its replicas included. */
  commandTimeoutMs: number;
  /** How long the commands of a process that just started wait for the connection's first connect. */
  connectTimeoutMs: number;
  /** The wait for replicas after each pop (REDIS_REPLICA_ACKS); none by default. */
  replicaAck?: ReplicaAck;
}

export class PoolLists {
  /** Commands of a process that just started wait for the first connect (after it, they fail fast when Redis is down). */
  private readonly firstConnect: FirstConnect;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly options: PoolListsOptions,
  ) {
    this.firstConnect = new FirstConnect(redis, options.connectTimeoutMs);
  }

  /** Sends `command` (once connected) within the deadline; a late result goes to `onLate` (dropped by default). */
  private run<T>(command: (redis: RedisClient) => Promise<T>, onLate?: (late: Promise<T>) => void): Promise<T> {
    const sent = this.firstConnect.run(() => command(this.redis));
    return withTimeout(sent, this.options.commandTimeoutMs, {
      error: () => new RedisNoReplyError(this.options.commandTimeoutMs),
      ...(onLate ? { onLate } : {}),
    });
  }

  /**
   * Pops up to `count` items and records them as consumed, in one script (one LMOVE for one item).
   * Rejects with a DeadlineError when the reply does not come in time; the script may still run (or have run),
   * and its reply then goes to `onLate`, so that the items it took are not lost. With a
   * revocation the script first checks the caller's credential (a REVOKED or UNCHECKED error reply, no pop).
   * While Redis's background fsync runs the script pops nothing (AOFBUSY, aof-guard.ts) and is sent
   * again, within the deadline: answered, a pop is in Redis's AOF, so a kill of Redis cannot undo it.
   * With REDIS_REPLICA_ACKS the pop is followed by WAIT on the same connection, within the same
   * deadline; a reply whose `shortfall` is set holds items nobody may be served.
   */
  pop(type: PoolType, groupId: number, count: number, onLate: (late: Promise<PopReply>) => void, revocation?: Revocation): Promise<PopReply> {
    const lists = { pool: this.keys.pool(type, groupId), consumed: this.keys.poolConsumed(type, groupId) };
    const ack = this.options.replicaAck ?? NO_REPLICA_ACK;
    const giveUpAt = Date.now() + this.options.commandTimeoutMs;
    const write = (redis: RedisClient) => untilAofWritable(() => popNow(redis, lists, count, revocation), giveUpAt);
    // Without REDIS_REPLICA_ACKS (the default) nothing waits for replicas: the pop is the write.
    if (!ack.enabled) return this.run(write, onLate);
    return this.run(async (redis) => {
      const { value, shortfall, sentOn } = await ack.afterWrite(redis, lists.pool, () => write(redis));
      return shortfall ? { ...value, shortfall, ...(sentOn ? { sentOn } : {}) } : value;
    }, onLate);
  }

  /**
   * Puts the items of a pop that nobody was served back at the pool's consume end, so they are
   * popped next, in their order. One RPUSH: atomic, and no deadline (it must not be dropped;
   * running late is harmless). With `sentOn` (a pop its replicas did not confirm) only on that
   * same connection: after a failover the promoted replica may still hold the items in the pool,
   * and a second copy would be served twice; elsewhere it rejects with ConnectionChangedError.
   */
  async putBack(type: PoolType, groupId: number, items: PoolItem[], sentOn?: ConnectionMark): Promise<number> {
    const pool = this.keys.pool(type, groupId);
    if (sentOn && !(this.options.replicaAck ?? NO_REPLICA_ACK).sameConnection(this.redis, pool, sentOn)) throw new ConnectionChangedError();
    return this.redis.rpush(pool, ...items.map(encodeItem).reverse());
  }

  /** True once the connection was closed for good (the process is stopping). */
  get closed(): boolean {
    return this.redis.status === 'end';
  }

  async length(type: PoolType, groupId: number): Promise<number> {
    return this.run((redis) => redis.llen(this.keys.pool(type, groupId)));
  }

  /** Pool length and consumed backlog of several pools (separate commands: the pools may live in different Cluster slots). */
  async lengths(pools: { type: PoolType; groupId: number }[]): Promise<{ length: number; pendingConsumed: number }[]> {
    return Promise.all(
      pools.map(async (p) => {
        const [length, pendingConsumed] = await Promise.all([
          this.run((redis) => redis.llen(this.keys.pool(p.type, p.groupId))),
          this.run((redis) => redis.llen(this.keys.poolConsumed(p.type, p.groupId))),
        ]);
        return { length, pendingConsumed };
      }),
    );
  }

  async snapshot(type: PoolType, groupId: number): Promise<PoolSnapshot> {
    const [length, ...ids] = await this.run((redis) =>
      snapshotScript.run<[number, ...string[]]>(redis, { pool: this.keys.pool(type, groupId), consumed: this.keys.poolConsumed(type, groupId) }, {}),
    );
    return { length: Number(length), ids };
  }

  /** Whether a refill holds the pool's lock: rows it reserved may be on their way to the list. */
  async refilling(type: PoolType, groupId: number): Promise<boolean> {
    return (await this.run((redis) => redis.exists(this.keys.poolRefillLock(type, groupId)))) === 1;
  }

  async acquireLock(type: PoolType, groupId: number, token: string, ttlMs: number): Promise<boolean> {
    return (await this.run((redis) => redis.set(this.keys.poolRefillLock(type, groupId), token, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async releaseLock(type: PoolType, groupId: number, token: string): Promise<boolean> {
    return this.run((redis) => deleteIfEquals(redis, this.keys.poolRefillLock(type, groupId), token));
  }

  /**
   * Pushes items (in serving order) only while `token` holds the refill lock; extends the lock.
   * Returns the new length, or undefined when the lock was lost (nothing pushed).
   */
  async pushFenced(type: PoolType, groupId: number, token: string, lockTtlMs: number, items: PoolItem[]): Promise<number | undefined> {
    const len = await this.run((redis) =>
      pushScript.run<number>(
        redis,
        { pool: this.keys.pool(type, groupId), lock: this.keys.poolRefillLock(type, groupId) },
        { token, lockTtlMs },
        { args: items.map(encodeItem) },
      ),
    );
    return len < 0 ? undefined : len;
  }

  /** The oldest `count` consumed items, oldest last (as LRANGE key -count -1 returns them). */
  async peekConsumed(type: PoolType, groupId: number, count: number): Promise<string[]> {
    return this.run((redis) => redis.lrange(this.keys.poolConsumed(type, groupId), -count, -1));
  }

  /** Removes the items read by peekConsumed once they are marked in the DB; 0 when another job did. */
  async trimConsumed(type: PoolType, groupId: number, peeked: string[]): Promise<number> {
    if (!peeked.length) return 0;
    return this.run((redis) =>
      trimConsumedScript.run<number>(redis, { consumed: this.keys.poolConsumed(type, groupId) }, { oldest: peeked.at(-1)!, count: peeked.length }),
    );
  }
}

/** The pop script and its decoded reply (a module function: a per-call closure would cost a keepNames wrapper under tsx). */
async function popNow(redis: RedisClient, lists: { pool: string; consumed: string }, count: number, revocation: Revocation | undefined): Promise<PopReply> {
  return decodePopReply(
    await (count === 1 ? popOneScript.run<string>(redis, lists, {}, revocation) : popScript.run<string>(redis, lists, { count }, revocation)),
  );
}

/**
 * The reply of a pop script: one JSON text, `[item, ..., length]` (pool-pop.lua). One JSON.parse
 * reads the items and the length, where an array reply cost the client a RESP array, a conversion
 * of each element and a parse per item (bench:pools, the client's side of a pop).
 */
export function decodePopReply(reply: string): PopReply {
  const parsed: unknown = JSON.parse(reply);
  if (!Array.isArray(parsed) || typeof parsed.at(-1) !== 'number') throw new TypeError('not a pool pop reply');
  const remaining = parsed.pop() as number;
  return { items: parsed.map(itemOf), remaining };
}
