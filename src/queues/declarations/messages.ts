import { z } from 'zod';
import { declareQueue } from '../declare-queue.js';

export const messageRole = z.enum(['system', 'user', 'assistant', 'tool']);
export type MessageRole = z.infer<typeof messageRole>;

/** One message accepted by the API. `messageId` makes a re-delivered persist idempotent; `seq` orders the session. */
export const acceptedMessage = z.object({
  messageId: z.string().min(1).max(64),
  sessionId: z.string().min(1).max(128),
  seq: z.number().int().min(0),
  role: messageRole,
  content: z.string().refine((c) => !c.includes('\u0000'), 'must not contain NUL characters'),
  acceptedAt: z.string().datetime(),
});
export type AcceptedMessage = z.infer<typeof acceptedMessage>;

/**
 * Write-behind trigger: drain the persist buffer of one shard (the API adds one when a message
 * lands in an empty buffer), or of every shard when `shard` is absent (the periodic sweep). The
 * messages themselves wait in the buffers (Redis lists), so one job writes a whole batch.
 */
export const messagePersistPayload = z.object({
  shard: z.number().int().min(0).max(255).optional(), // MESSAGE_PERSIST_SHARDS is at most 256
});
export type MessagePersistPayload = z.infer<typeof messagePersistPayload>;

export const messageQueues = {
  messagePersist: declareQueue({
    name: 'message-persist',
    family: 'messages',
    role: 'messages',
    description: 'Write-behind of accepted session messages to the DB.',
    payload: messagePersistPayload,
    // A buffer's drains share its shard's partition; the sweep (no shard) lives in the first.
    partitionKey: (job) => job.shard ?? 0,
    // One job per buffer at a time is enough (a busy buffer is left to its drain); one more for the sweep.
    worker: { concurrency: (config) => config.messages.persistShards + 1 },
    schedulers: [
      {
        id: 'message-persist-sweep',
        everyMs: (config) => config.messages.persistSweepMs,
        name: 'sweep',
        data: {},
        opts: { removeOnComplete: { count: 10 }, removeOnFail: { age: 3600 } },
      },
    ],
  }),
};
