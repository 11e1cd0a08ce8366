/**
 * The messages role: the persist worker of the session message cache (queue `message-persist`).
 * It drains the persist buffers into chat_messages in batches, idempotently (persist-messages.ts),
 * and upserts the periodic sweep of every buffer (a BullMQ job scheduler: one per cluster,
 * whichever process upserts it; the leader puts it back should Redis lose it:
 * src/coordination/job-scheduler-keeper.ts).
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createWorker } from '../queues/create-worker.js';
import { upsertDeclaredSchedulers } from '../coordination/job-scheduler-keeper.js';
import { MessageStore } from './message-store.js';
import { PersistBuffer } from './persist-buffer.js';
import { persistProcessor } from './persist-messages.js';

export async function startMessagesRole(ctx: PlatformContext): Promise<RoleHandle> {
  const s = ctx.config.messages;
  const rows = ctx.metrics.counter('wp_messages_persisted_total', 'Messages written to the DB by the persist worker (new rows only).');
  const refused = ctx.metrics.counter(
    'wp_messages_refused_total',
    'Accepted messages the DB refused when drained, set aside for an admin (GET /api/messages/refused).',
  );
  const waiting = ctx.metrics.gauge('wp_messages_refused_waiting', 'Refused messages waiting for an admin to requeue or discard them (read at scrape time).');
  const buffer = new PersistBuffer(ctx.keys, s);
  ctx.metrics.onScrape(async () => {
    waiting.set((await buffer.refusedLengths(ctx.redis)).reduce((a, b) => a + b, 0));
  });
  const processor = persistProcessor({
    redis: ctx.redis,
    buffer,
    store: new MessageStore(ctx.db),
    logger: ctx.logger.child({ domain: 'messages' }),
    queues: ctx.queues,
    shards: s.persistShards,
    onInserted: (n) => rows.inc(n),
    onRefused: (n) => refused.inc(n),
  });
  // The sweep (queues/declarations/messages.ts: in the first partition); the leader keeps it.
  await upsertDeclaredSchedulers(ctx, 'messagePersist');
  const worker = createWorker(ctx, 'messagePersist', processor);
  let stopping: Promise<void> | undefined;
  return {
    name: 'messages',
    queues: worker.queueNames,
    stop: () =>
      (stopping ??= (async () => {
        await worker.close();
      })()),
  };
}
