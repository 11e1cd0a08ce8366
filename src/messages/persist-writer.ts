/**
 * Makes accepted messages durable for the API: the write-behind persist buffer, or the DB itself
 * when Redis cannot take the message.
 *
 * The message is appended to its session's persist buffer on the session's cache connection, in
 * the same step as the cache write (one round trip for both). When the buffer was empty, a drain
 * job is queued for it (at most one per MESSAGE_PERSIST_TRIGGER_MS and buffer, the last push always
 * followed by one); a lost trigger only delays the write until the periodic sweep.
 *
 * When Redis is down the connection fails at once (and a command that has not answered within
 * MESSAGE_REDIS_TIMEOUT_MS counts as failed; so does a push its replicas did not confirm with
 * REDIS_REPLICA_ACKS, which a failover could lose): the message is inserted straight into the DB,
 * set-based with whatever else is being written that way (group commit) and idempotent by message
 * id. A push that timed out but landed later only delivers a message the DB already holds, which
 * the drain's ON CONFLICT DO NOTHING skips.
 */
import type { Counter } from 'prom-client';
import { runGuarded } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import { toError, UnauthenticatedError } from '../errors.js';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import type { AcceptedMessage } from '../queues/payloads/messages.js';
import type { QueueRegistry } from '../queues/registry.js';
import { TrailingThrottle } from '../lib/trailing-throttle.js';
import { GroupCommit } from '../lib/group-commit.js';
import type { MessageConnections } from './message-connections.js';
import type { MessageStore } from './message-store.js';
import type { PersistBuffer } from './persist-buffer.js';
import { requestDrain } from './persist-messages.js';

export interface PersistWriterSettings {
  persistBatch: number;
  persistParallel: number;
  persistTriggerMs: number;
}

export type Durability = 'buffered' | 'stored';

export class PersistWriter {
  private readonly direct: GroupCommit<AcceptedMessage>;
  /** At most one drain job per buffer and MESSAGE_PERSIST_TRIGGER_MS, the last push always followed by one. */
  private readonly triggers: TrailingThrottle;
  private readonly bufferOutage: OutageLog<Error>;

  constructor(
    private readonly deps: {
      connections: MessageConnections;
      buffer: PersistBuffer;
      queues: QueueRegistry;
      store: MessageStore;
      logger: Logger;
      settings: PersistWriterSettings;
      accepted: Counter<'path'>;
    },
  ) {
    this.triggers = new TrailingThrottle(deps.settings.persistTriggerMs);
    this.bufferOutage = new OutageLog({
      began: (err) => deps.logger.warn({ err: err.message }, 'persist buffer unavailable; writing accepted messages straight to the DB'),
      ended: () => deps.logger.info('persist buffer reachable again; messages are written behind again'),
    });
    this.direct = new GroupCommit({
      maxItems: deps.settings.persistBatch,
      parallel: deps.settings.persistParallel,
      flush: async (messages) => {
        await deps.store.insert(messages);
      },
    });
    // Create the queue (and its connection handshake) now, while Redis is expected up.
    deps.queues.queue('messagePersist', 0);
  }

  /**
   * Resolves once the message is in its persist buffer or in the DB; rejects when neither took
   * it, and with an UnauthenticatedError (401) when `revocation` finds the caller logged out or its credential
   * changed (nothing stored). A push that could not confirm the credential (UNCHECKED) makes the
   * full check and is sent again.
   */
  async persist(message: AcceptedMessage, revocation?: Revocation): Promise<Durability> {
    const { buffer, connections, accepted } = this.deps;
    let wasEmpty: boolean;
    try {
      wasEmpty = await runGuarded(revocation, () => buffer.push(connections, message, revocation));
    } catch (err) {
      if (err instanceof UnauthenticatedError) throw err;
      // The credential was not checked with the push: it is checked on its own before the DB takes the message.
      await revocation?.check();
      this.bufferOutage.failure(toError(err));
      await this.direct.submit([message]);
      accepted.inc({ path: 'direct' });
      return 'stored';
    }
    this.bufferOutage.success();
    accepted.inc({ path: 'buffer' });
    if (wasEmpty) this.trigger(buffer.shardOf(message.sessionId));
    return 'buffered';
  }

  /**
   * Queues a drain of the buffer, throttled per buffer: at low rates nearly every push finds its
   * buffer empty (the last drain just ran), and a job per message would cost more than the message.
   * Not awaited by the request (the sweep covers a lost trigger).
   */
  private trigger(shard: number): void {
    this.triggers.request(String(shard), () => {
      requestDrain(this.deps.queues, shard).catch((err: Error) => {
        this.deps.logger.debug({ shard, err: err.message }, 'drain trigger not queued; the sweep will drain the buffer');
      });
    });
  }
}
