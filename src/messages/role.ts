/**
 * The messages role: the persist worker of the session message cache (queue `message-persist`).
 * It writes accepted messages to chat_messages in batches, idempotently (see persist-messages.ts).
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createWorker } from '../queues/create-worker.js';
import type { AcceptedMessage } from '../queues/payloads/messages.js';
import { GroupCommit } from './group-commit.js';
import { MessageStore } from './message-store.js';
import { persistProcessor } from './persist-messages.js';

export async function startMessagesRole(ctx: PlatformContext): Promise<RoleHandle> {
  const s = ctx.config.messages;
  const store = new MessageStore(ctx.db);
  const rows = ctx.metrics.counter('wp_messages_persisted_total', 'Messages written to the DB by the persist worker (new rows only).');
  const writes = new GroupCommit<AcceptedMessage>({
    maxItems: s.persistBatch,
    parallel: s.persistParallel,
    flush: async (messages) => {
      rows.inc(await store.insert(messages));
    },
  });
  const worker = createWorker(ctx, 'messagePersist', persistProcessor(writes), { concurrency: s.persistConcurrency });
  let stopping: Promise<void> | undefined;
  return {
    name: 'messages',
    queues: [worker.queueName],
    stop: () => (stopping ??= worker.close()),
  };
}
