import { z } from 'zod';

/** A message accepted by the API, to be written behind to the DB. */
export const messagePersistPayload = z.object({
  messageId: z.string().min(1).max(64),
  sessionId: z.string().min(1).max(128),
  seq: z.number().int().min(0),
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  acceptedAt: z.string().datetime(),
});
export type MessagePersistPayload = z.infer<typeof messagePersistPayload>;
