/**
 * The write path (reference 3.1, write-behind): accept a message, give it its place in the
 * session (`seq`), append it to the session's cache list and make it durable.
 *
 *   1. seq and id are assigned and the cache MULTI is sent in one synchronous step, so one
 *      process's appends reach the list in seq order (a session keeps its connection);
 *   2. in the same step the message goes to its persist buffer, or straight to the DB when Redis
 *      cannot take it (PersistWriter);
 *   3. a failed cache write is logged and does not fail the request; the session is handed to
 *      the cache repair so the list gets the message once it is in the DB (so is an append the
 *      replicas did not confirm, REDIS_REPLICA_ACKS: a failover could lose it from the list);
 *   4. only when neither the buffer nor the DB took the message does the request fail (503), and
 *      the entry is taken back out of the list. A push the replicas did not confirm counts as not
 *      taken: the message goes to the DB before the request is answered (PersistWriter).
 *
 * With a `revocation` (src/revocation/revocation.ts) the cache append and the buffer push each check the
 * caller's credential first, so a logged-out session or a changed credential writes nothing (401)
 * at no extra round trip; when Redis cannot take the push, the credential is checked on its own
 * before the DB write. A cache append that could not confirm the credential (its state was not in
 * Redis) is left to the cache repair, like a failed one, while the push makes the full check.
 */
import type { Counter } from 'prom-client';
import { isRevokedReply, isUncheckedReply } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import { DependencyDownError, UnauthenticatedError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { ReplicaAckError } from '../redis/replica-ack.js';
import type { AcceptedMessage, MessageRole } from '../queues/payloads/messages.js';
import type { CacheRepair } from './cache-repair.js';
import { entryOf, viewOf } from './message-entry.js';
import { newMessageId } from './message-id.js';
import type { MessageCache } from './message-cache.js';
import type { Durability, PersistWriter } from './persist-writer.js';
import type { SequenceClock } from './sequence-clock.js';

export interface AppendDeps {
  cache: MessageCache;
  writer: PersistWriter;
  repair: CacheRepair;
  clock: SequenceClock;
  logger: Logger;
  cacheWriteFailures: Counter;
}

export interface AppendResult {
  /** The message as the API returns it (JSON). */
  entry: string;
  durability: Durability;
}

export async function appendMessage(deps: AppendDeps, sessionId: string, role: MessageRole, content: string, revocation?: Revocation): Promise<AppendResult> {
  const now = Date.now();
  const message: AcceptedMessage = {
    messageId: newMessageId(now),
    sessionId,
    seq: deps.clock.next(),
    role,
    content,
    acceptedAt: new Date(now).toISOString(),
  };
  const entry = entryOf(viewOf(message));
  const cached = deps.cache.append(sessionId, entry, revocation).then(
    () => true,
    (err: Error) => {
      // Logged out: the push refuses too (the request fails with 401); not a cache failure. Not
      // confirmed: the push makes the full check (401, or the message is stored and repaired in).
      if (isRevokedReply(err) || isUncheckedReply(err)) return false;
      deps.cacheWriteFailures.inc();
      // Written, but not confirmed by the replicas (REDIS_REPLICA_ACKS): repaired like a failed
      // write; logged once per episode by the persist path, not once per message.
      if (err instanceof ReplicaAckError) return false;
      deps.logger.warn({ sessionId, err: err.message }, 'message cache write failed; the message is persisted without it');
      return false;
    },
  );

  let durability: Durability;
  try {
    durability = await deps.writer.persist(message, revocation);
  } catch (err) {
    if (await cached) await deps.cache.remove(sessionId, entry).catch(() => undefined);
    // Logged out or a changed credential (401), or the credential could not be checked when the DB
    // was to take the message (503).
    if (err instanceof UnauthenticatedError || (err instanceof DependencyDownError && err.dependency === 'redis')) throw err;
    throw new DependencyDownError('database', 'the message could not be stored: neither Redis nor the database is available', { cause: err });
  }
  if (!(await cached)) deps.repair.track(sessionId, message.messageId, entry);
  return { entry, durability };
}
