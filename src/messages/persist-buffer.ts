/**
 * The persist buffers: accepted messages waiting to be written to the DB, one Redis list per
 * shard (`messages:persist:{persist-N}`, a session's shard is its hash modulo
 * MESSAGE_PERSIST_SHARDS). The API appends; the persist worker drains a buffer in batches under a
 * lease (`...:lock`), so batches are as large as what piled up, whatever the request rate.
 *
 * The head batch of a buffer goes through these states:
 *   waiting  (in the list, no lease)
 *   claimed  (a drain holds the lease and has read up to MESSAGE_PERSIST_BATCH entries)
 *   written  (INSERTed; ON CONFLICT (message_id) DO NOTHING)
 *   removed  (LTRIMmed off by the same drain, only while it still holds the lease)
 * A drain that dies between claim and removal leaves the batch waiting; when its lease runs out
 * the next drain claims the batch again and the INSERT skips what is stored already. A claim that
 * finds the buffer empty drops the lease in the same step, so a message pushed afterwards finds
 * the buffer empty (RPUSH answers 1) and triggers a new drain: nothing waits for the sweep except
 * after a crash or a lost trigger.
 */
import { GuardedScript } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import type { AcceptedMessage } from '../queues/payloads/messages.js';
import { onSessionConnection, type MessageConnections } from './message-connections.js';
import { sessionHash } from './session-hash.js';
import { deleteIfEquals } from '../redis/delete-if-equals.js';
import { NO_REPLICA_ACK, type ReplicaAck } from '../redis/replica-ack.js';

const PUSH = GuardedScript.load('message-persist-push', new URL('./message-persist-push.lua', import.meta.url), { keys: ['buffer'], args: ['message'] });

const CLAIM = RedisScript.load('message-persist-claim', new URL('./message-persist-claim.lua', import.meta.url), {
  keys: ['buffer', 'lease'],
  args: ['token', 'leaseMs', 'batchSize'],
});

const REMOVE = RedisScript.load('message-persist-remove', new URL('./message-persist-remove.lua', import.meta.url), {
  keys: ['buffer', 'lease'],
  args: ['token', 'written'],
});

export interface PersistBufferSettings {
  persistShards: number;
  persistBatch: number;
  persistLockMs: number;
}

export class PersistBuffer {
  constructor(
    private readonly keys: Keys,
    private readonly settings: PersistBufferSettings,
    /** With REDIS_REPLICA_ACKS a push is confirmed by the replicas or rejected (src/redis/replica-ack.ts). */
    private readonly replicaAck: ReplicaAck = NO_REPLICA_ACK,
  ) {}

  shardOf(sessionId: string): number {
    return sessionHash(sessionId) % this.settings.persistShards;
  }

  /**
   * Appends a message to its session's buffer on the session's connection (written in the same
   * step as the cache append, so both share a round trip). Resolves true when the buffer was
   * empty; rejects with the REVOKED (UNCHECKED) error reply when `revocation` finds the caller
   * logged out (cannot confirm the caller's credential), and with a ReplicaAckError when the
   * replicas did not confirm the push (REDIS_REPLICA_ACKS; the entry stays: the drain skips a
   * message the DB already holds).
   */
  push(connections: MessageConnections, message: AcceptedMessage, revocation?: Revocation): Promise<boolean> {
    const buffer = this.keys.messagePersistBuffer(this.shardOf(message.sessionId));
    return onSessionConnection(
      connections,
      message.sessionId,
      async (client) =>
        (await this.replicaAck.write(client, buffer, () => PUSH.run<number>(client, { buffer }, { message: JSON.stringify(message) }, revocation))) === 1,
    );
  }

  /** The head batch for a drain holding (or taking) the lease; null when another drain holds it. */
  claim(redis: RedisClient, shard: number, token: string): Promise<string[] | null> {
    const { persistBatch, persistLockMs } = this.settings;
    return CLAIM.run<string[] | null>(redis, this.shardKeys(shard), { token, leaseMs: persistLockMs, batchSize: persistBatch });
  }

  /** Removes `count` written entries from the head; false when the lease was lost meanwhile. */
  async remove(redis: RedisClient, shard: number, token: string, count: number): Promise<boolean> {
    return (await REMOVE.run<number>(redis, this.shardKeys(shard), { token, written: count })) === 1;
  }

  async release(redis: RedisClient, shard: number, token: string): Promise<void> {
    await deleteIfEquals(redis, this.keys.messagePersistLock(shard), token);
  }

  /** Sets aside entries the DB refused one by one, with the reason. */
  async setAside(redis: RedisClient, shard: number, entries: { entry: string; error: string }[]): Promise<void> {
    if (entries.length) await redis.rpush(this.keys.messagePersistDead(shard), ...entries.map((e) => JSON.stringify(e)));
  }

  /** Entries set aside as refused, in each buffer's refused list, by shard. */
  refusedLengths(redis: RedisClient): Promise<number[]> {
    return Promise.all(Array.from({ length: this.settings.persistShards }, (_, s) => redis.llen(this.keys.messagePersistDead(s))));
  }

  /** Messages waiting in each buffer, by shard. */
  lengths(redis: RedisClient): Promise<number[]> {
    return Promise.all(Array.from({ length: this.settings.persistShards }, (_, s) => redis.llen(this.keys.messagePersistBuffer(s))));
  }

  private shardKeys(shard: number): { buffer: string; lease: string } {
    return { buffer: this.keys.messagePersistBuffer(shard), lease: this.keys.messagePersistLock(shard) };
  }
}
