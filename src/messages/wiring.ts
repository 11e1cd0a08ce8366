/**
 * The messages' wiring: what the API asks of them, built once per API process from the platform
 * context: the message service (cache, write-behind buffer, repair, fills) and the refused-messages
 * console. The messages role (role.ts) builds the drain's side.
 */
import type { PlatformContext } from '../context.js';
import type { AppendDeps } from './append-message.js';
import { CacheFill } from './cache-fill.js';
import { CacheRepair } from './cache-repair.js';
import { MessageCache } from './message-cache.js';
import { MessageConnections } from './message-connections.js';
import { messageService, type MessageService } from './message-service.js';
import { MessageStore } from './message-store.js';
import { PersistBuffer } from './persist-buffer.js';
import { requestDrain } from './persist-messages.js';
import { PersistWriter } from './persist-writer.js';
import type { ReadDeps } from './read-messages.js';
import { RefusedMessages, type RefusedMessage } from './refused-messages.js';
import { SequenceClock } from './sequence-clock.js';
import { SessionOwners } from './session-owners.js';

/** What the API asks of the messages: the sessions' messages, and the console over messages the database refused. */
export interface MessagesApi {
  service: MessageService;
  refused: RefusedMessagesApi;
}

export function wireMessagesApi(ctx: PlatformContext): MessagesApi {
  return { service: wireMessageService(ctx), refused: wireRefusedMessages(ctx) };
}

function wireMessageService(ctx: PlatformContext): MessageService {
  const s = ctx.config.messages;
  const logger = ctx.logger.child({ domain: 'messages' });
  const { metrics } = ctx;
  const clients = Array.from({ length: s.redisPoolSize }, (_, i) =>
    ctx.connections.create('command', `messages:${i}`, { connectTimeoutMs: s.redisConnectTimeoutMs, commandTimeoutMs: s.redisTimeoutMs }),
  );
  const connections = new MessageConnections(clients, s.redisConnectTimeoutMs);
  const cache = new MessageCache(connections, ctx.keys, s, ctx.connections.replicaAck);
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
    buffer: new PersistBuffer(ctx.keys, s, ctx.connections.replicaAck),
    queues: ctx.queues,
    store,
    logger,
    settings: s,
    accepted: metrics.counter(
      'wp_messages_accepted_total',
      'Accepted messages by how they were made durable: buffer (write-behind) or direct (DB, Redis unavailable).',
      ['path'],
    ),
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
    fill: new CacheFill({
      cache,
      logger,
      filled: metrics.counter('wp_message_cache_fills_total', 'Background refills of a session list after a read miss, by outcome.', ['outcome']),
    }),
    cacheReads: metrics.counter('wp_message_cache_reads_total', 'Message reads by cache outcome (hit, miss, error, repairing).', ['outcome']),
  };
  return messageService(new SessionOwners(ctx.db), appendDeps, readDeps);
}

/** The admins' console over messages the database refused when drained. */
export interface RefusedMessagesApi {
  list(limit: number): Promise<{ total: number; messages: RefusedMessage[] }>;
  /** Puts every refused message back into its buffer and asks for a drain of each buffer touched; answers how many. */
  requeue(): Promise<number>;
  discard(messageId: string): Promise<boolean>;
}

function wireRefusedMessages(ctx: Pick<PlatformContext, 'redis' | 'keys' | 'queues' | 'config'>): RefusedMessagesApi {
  const refused = new RefusedMessages(ctx.redis, ctx.keys, ctx.config.messages.persistShards);
  return {
    list: (limit) => refused.list(limit),
    requeue: async () => {
      const shards = await refused.requeue();
      await Promise.all(shards.map((s) => requestDrain(ctx.queues, s.shard)));
      return shards.reduce((n, s) => n + s.requeued, 0);
    },
    discard: (messageId) => refused.discard(messageId),
  };
}
