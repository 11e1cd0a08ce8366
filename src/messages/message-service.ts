/**
 * The message cache as the API uses it: the write and read paths wired to the platform's Redis,
 * queues and database. Built once per API process.
 */
import type { Revocation } from '../revocation/revocation.js';
import type { PlatformContext } from '../context.js';
import type { MessageRole } from '../queues/payloads/messages.js';
import { appendMessage, type AppendDeps, type AppendResult } from './append-message.js';
import { CacheFill } from './cache-fill.js';
import { CacheRepair } from './cache-repair.js';
import { MessageCache } from './message-cache.js';
import { MessageConnections } from './message-connections.js';
import { MessageStore } from './message-store.js';
import { PersistBuffer } from './persist-buffer.js';
import { PersistWriter } from './persist-writer.js';
import { readMessages, type ReadDeps, type ReadResult } from './read-messages.js';
import { SequenceClock } from './sequence-clock.js';
import { SessionOwners } from './session-owners.js';

/**
 * The caller's credential is checked before its session's owner is read or claimed, so that a
 * logged-out or changed credential claims nothing and learns nothing (401 before any 404).
 */
async function checkFirst(revocation: Revocation | undefined, then: () => Promise<void>): Promise<void> {
  await revocation?.check();
  await then();
}

/**
 * `userId`: the caller, who must own the session (session-owners.ts; a write to a session nobody
 * owns makes it the caller's). `revocation`: the caller's credential check, made in the request's
 * own Redis script (src/revocation/revocation.ts), or up front when the owner must be read or claimed.
 */
export interface MessageService {
  append(userId: number, sessionId: string, role: MessageRole, content: string, revocation?: Revocation): Promise<AppendResult>;
  read(userId: number, sessionId: string, limit: number, revocation?: Revocation): Promise<ReadResult>;
}

export function createMessageService(ctx: PlatformContext): MessageService {
  const s = ctx.config.messages;
  const logger = ctx.logger.child({ domain: 'messages' });
  const { metrics } = ctx;
  const clients = Array.from({ length: s.redisPoolSize }, (_, i) =>
    ctx.connections.create('command', `messages:${i}`, { connectTimeoutMs: s.redisConnectTimeoutMs, commandTimeoutMs: s.redisTimeoutMs }),
  );
  const connections = new MessageConnections(clients, s.redisConnectTimeoutMs);
  const cache = new MessageCache(connections, ctx.keys, s);
  const store = new MessageStore(ctx.db);
  const clock = new SequenceClock();
  const repair = new CacheRepair({
    cache,
    store,
    logger,
    cacheMaxLen: s.cacheMaxLen,
    intervalMs: s.repairIntervalMs,
    repaired: metrics.counter('wp_message_cache_repairs_total', 'Session lists merged with the DB after a failed cache write.'),
  });
  const writer = new PersistWriter({
    connections,
    buffer: new PersistBuffer(ctx.keys, s),
    queues: ctx.queues,
    store,
    logger,
    settings: s,
    accepted: metrics.counter('wp_messages_accepted_total', 'Accepted messages by how they were made durable: buffer (write-behind) or direct (DB, Redis unavailable).', ['path']),
  });
  const appendDeps: AppendDeps = {
    cache,
    writer,
    repair,
    clock,
    logger,
    cacheWriteFailures: metrics.counter('wp_message_cache_write_failures_total', 'Cache MULTIs that failed (the message was persisted anyway).'),
  };
  const readDeps: ReadDeps = {
    cache,
    store,
    repair,
    clock,
    cacheMaxLen: s.cacheMaxLen,
    fill: new CacheFill({ cache, logger, filled: metrics.counter('wp_message_cache_fills_total', 'Background refills of a session list after a read miss, by outcome.', ['outcome']) }),
    cacheReads: metrics.counter('wp_message_cache_reads_total', 'Message reads by cache outcome (hit, miss, error, repairing).', ['outcome']),
  };
  const owners = new SessionOwners(ctx.db);
  return {
    // A session this process knows to be the caller's goes straight on (no await before the append:
    // append-message.ts needs its steps in one synchronous run).
    append: (userId, sessionId, role, content, revocation) =>
      owners.ownedBy(sessionId, userId)
        ? appendMessage(appendDeps, sessionId, role, content, revocation)
        : checkFirst(revocation, () => owners.claim(sessionId, userId)).then(() => appendMessage(appendDeps, sessionId, role, content, revocation)),
    read: (userId, sessionId, limit, revocation) =>
      owners.ownedBy(sessionId, userId)
        ? readMessages(readDeps, sessionId, limit, revocation)
        : checkFirst(revocation, () => owners.assertReadable(sessionId, userId)).then(() => readMessages(readDeps, sessionId, limit, revocation)),
  };
}
