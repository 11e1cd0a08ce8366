/**
 * The session message cache in Redis (reference: message-cache-and-auth.md 2.1, 4): one list
 * per session, `chat:session:{id}:messages`, oldest first, at most MESSAGE_CACHE_MAX_LEN
 * entries, expiring MESSAGE_CACHE_TTL_SECONDS after the last write.
 *
 * Commands go over the message cache's own connections (MessageConnections): a session always
 * uses the same one, so the appends of one process reach Redis in the order their `seq` was
 * assigned.
 */
import { GuardedScript } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import type { Keys } from '../redis/keys.js';
import { NO_REPLICA_ACK, type ReplicaAck } from '../redis/replica-ack.js';
import { RedisScript } from '../redis/script.js';
import { onSessionConnection, type MessageConnections } from './message-connections.js';
import { SESSION_START, entryOf, type MessageView } from './message-entry.js';

/**
 * The append of reference 4.1 (RPUSH + EXPIRE + LTRIM, one atomic step: the reference's MULTI as
 * one script), after the caller's credential check when given (src/revocation/revocation.ts).
 */
const APPEND_SCRIPT = GuardedScript.load('message-cache-append', new URL('./message-cache-append.lua', import.meta.url), {
  keys: ['list'],
  args: ['entry', 'ttlSeconds', 'maxLength'],
});

/** The newest `count` entries, after the caller's credential check when given (message-cache-read.lua). */
const READ_SCRIPT = GuardedScript.load('message-cache-read', new URL('./message-cache-read.lua', import.meta.url), { keys: ['list'], args: ['count'] });

/**
 * Merges a session's list with a snapshot of its newest rows in the DB, so that no message held
 * by either is lost: a message is in the DB or, until its persist job has run, in the list.
 * Sorted by (seq, id), de-duplicated by id, the newest max-length kept.
 */
const MERGE_SCRIPT = RedisScript.load('message-cache-merge', new URL('./message-cache-merge.lua', import.meta.url), {
  keys: ['list'],
  args: ['maxLength', 'ttlSeconds', 'complete', 'mode', 'startMarker'],
});

export interface MessageCacheSettings {
  cacheMaxLen: number;
  cacheTtlSeconds: number;
}

export type MergeMode = 'fill' | 'repair';

export class MessageCache {
  constructor(
    private readonly connections: MessageConnections,
    private readonly keys: Keys,
    private readonly settings: MessageCacheSettings,
    /** With REDIS_REPLICA_ACKS an append is confirmed by the replicas or rejected (src/redis/replica-ack.ts). */
    private readonly replicaAck: ReplicaAck = NO_REPLICA_ACK,
  ) {}

  /** True once the connections were closed (the process is shutting down). */
  get closed(): boolean {
    return this.connections.closed;
  }

  /**
   * RPUSH + EXPIRE + LTRIM in one atomic script (reference 4.1); throws when it failed, and with
   * the REVOKED (UNCHECKED) error reply when `revocation` finds the caller logged out (cannot confirm
   * the caller's credential), nothing written; with a ReplicaAckError when the replicas did not
   * confirm it (REDIS_REPLICA_ACKS: the entry is on the master only). The
   * command is written before this returns (unless the connection is still being made).
   */
  async append(sessionId: string, entry: string, revocation?: Revocation): Promise<void> {
    const { cacheMaxLen, cacheTtlSeconds } = this.settings;
    const list = this.keys.sessionMessages(sessionId);
    await onSessionConnection(this.connections, sessionId, (client) =>
      this.replicaAck.write(client, list, () =>
        APPEND_SCRIPT.run(client, { list }, { entry, ttlSeconds: cacheTtlSeconds, maxLength: cacheMaxLen }, revocation),
      ),
    );
  }

  /** The last `count` list elements (the start marker included when it is among them); REVOKED as for append. */
  read(sessionId: string, count: number, revocation?: Revocation): Promise<string[]> {
    const list = this.keys.sessionMessages(sessionId);
    return onSessionConnection(this.connections, sessionId, (client) => READ_SCRIPT.run<string[]>(client, { list }, { count }, revocation));
  }

  /** Removes one entry (an append whose message could not be made durable). */
  async remove(sessionId: string, entry: string): Promise<void> {
    await onSessionConnection(this.connections, sessionId, (client) => client.lrem(this.keys.sessionMessages(sessionId), 1, entry));
  }

  /** Merges the list with a DB snapshot (oldest first); see MERGE_SCRIPT. */
  merge(sessionId: string, snapshot: MessageView[], complete: boolean, mode: MergeMode): Promise<number> {
    const { cacheMaxLen, cacheTtlSeconds } = this.settings;
    const rows = snapshot.slice(-cacheMaxLen).flatMap((v) => [String(v.seq), v.id, entryOf(v)]);
    return onSessionConnection(this.connections, sessionId, (client) =>
      MERGE_SCRIPT.run<number>(
        client,
        { list: this.keys.sessionMessages(sessionId) },
        { maxLength: cacheMaxLen, ttlSeconds: cacheTtlSeconds, complete, mode, startMarker: SESSION_START },
        { args: rows },
      ),
    );
  }
}
