import { z } from 'zod';

export const messageRole = z.enum(['system', 'user', 'assistant', 'tool']);
export type MessageRole = z.infer<typeof messageRole>;

/** One message accepted by the API. `messageId` makes a re-delivered persist idempotent; `seq` orders the session. */
export const acceptedMessage = z.object({
  messageId: z.string().min(1).max(64),
  sessionId: z.string().min(1).max(128),
  seq: z.number().int().min(0),
  role: messageRole,
  content: z.string(),
  acceptedAt: z.string().datetime(),
});
export type AcceptedMessage = z.infer<typeof acceptedMessage>;

/**
 * Write-behind of accepted messages to the DB. The API gathers the messages accepted while its
 * previous enqueue was in flight into one job (any sessions), so a job carries 1..MESSAGE_PERSIST_BATCH
 * messages; the worker writes them idempotently (ON CONFLICT (message_id) DO NOTHING).
 */
export const messagePersistPayload = z.object({
  messages: z.array(acceptedMessage).min(1),
});
export type MessagePersistPayload = z.infer<typeof messagePersistPayload>;
