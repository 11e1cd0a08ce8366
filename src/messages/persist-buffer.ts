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
import { guardedArgs, guardedKeys, revocationGuardLua, type Revocation } from '../revocation/revocation.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import type { AcceptedMessage } from '../queues/payloads/messages.js';
import { onSessionConnection, type MessageConnections } from './message-connections.js';
import { sessionHash } from './session-hash.js';

const PUSH = new RedisScript(
  'message-persist-push',
  `-- KEYS[1]  the buffer
-- KEYS[2], KEYS[3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--          or UNCHECKED error and no push unless the first is absent and the second holds ARGV[2]
-- ARGV[1]  the message   ARGV[2] (with KEYS[2]) the caller's credential state
-- Returns the buffer's length after the push (1: it was empty).
${revocationGuardLua(2)}
return redis.call('RPUSH', KEYS[1], ARGV[1])`,
);

const CLAIM = new RedisScript(
  'message-persist-claim',
  `-- KEYS[1]  the buffer        KEYS[2]  its lease
-- ARGV[1]  the drain's token  ARGV[2]  lease in ms  ARGV[3]  batch size
-- Returns false when another drain holds the lease; else the head batch (empty: lease dropped).
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return false end
local batch = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
if #batch == 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
end
return batch`,
);

const REMOVE = new RedisScript(
  'message-persist-remove',
  `-- KEYS[1]  the buffer        KEYS[2]  its lease
-- ARGV[1]  the drain's token  ARGV[2]  entries written (the head of the buffer)
-- Removes them when the lease is still this drain's: 1; else 0 (the new holder writes them again).
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[1], tonumber(ARGV[2]), -1)
return 1`,
);

const RELEASE = new RedisScript(
  'message-persist-release',
  `-- KEYS[1]  the lease   ARGV[1]  the drain's token
-- Drops the lease when it is this drain's.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
);

export interface PersistBufferSettings {
  persistShards: number;
  persistBatch: number;
  persistLockMs: number;
}

export class PersistBuffer {
  constructor(
    private readonly keys: Keys,
    private readonly settings: PersistBufferSettings,
  ) {}

  shardOf(sessionId: string): number {
    return sessionHash(sessionId) % this.settings.persistShards;
  }

  /**
   * Appends a message to its session's buffer on the session's connection (written in the same
   * step as the cache append, so both share a round trip). Resolves true when the buffer was
   * empty; rejects with the REVOKED (UNCHECKED) error reply when `revocation` finds the caller
   * logged out (cannot confirm the caller's credential).
   */
  push(connections: MessageConnections, message: AcceptedMessage, revocation?: Revocation): Promise<boolean> {
    const keys = guardedKeys([this.keys.messagePersistBuffer(this.shardOf(message.sessionId))], revocation);
    const args = guardedArgs([JSON.stringify(message)], revocation);
    return onSessionConnection(connections, message.sessionId, async (client) => (await PUSH.run<number>(client, keys, args)) === 1);
  }

  /** The head batch for a drain holding (or taking) the lease; null when another drain holds it. */
  claim(redis: RedisClient, shard: number, token: string): Promise<string[] | null> {
    const { persistBatch, persistLockMs } = this.settings;
    return CLAIM.run<string[] | null>(redis, this.shardKeys(shard), [token, persistLockMs, persistBatch]);
  }

  /** Removes `count` written entries from the head; false when the lease was lost meanwhile. */
  async remove(redis: RedisClient, shard: number, token: string, count: number): Promise<boolean> {
    return (await REMOVE.run<number>(redis, this.shardKeys(shard), [token, count])) === 1;
  }

  async release(redis: RedisClient, shard: number, token: string): Promise<void> {
    await RELEASE.run(redis, [this.keys.messagePersistLock(shard)], [token]);
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

  private shardKeys(shard: number): string[] {
    return [this.keys.messagePersistBuffer(shard), this.keys.messagePersistLock(shard)];
  }
}
