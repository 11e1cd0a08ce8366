import { z } from 'zod';
import type { PlatformContext } from '../../context.js';
import { createMessageService, type MessageService } from '../../messages/message-service.js';
import { readAnswerJson } from '../../messages/message-entry.js';
import { messageRole } from '../../queues/payloads/messages.js';
import { defineRoute, type AnyRoute } from '../route.js';

export const MAX_READ_LIMIT = 1000;
export const DEFAULT_READ_LIMIT = 50;

/** Letters, digits, '-' and '_' only: the id becomes a Redis hash tag ({...}) and a path segment. */
const sessionParams = z.object({
  sessionId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1 to 128 letters, digits, "-" or "_"'),
});

function appendBody(maxContentBytes: number) {
  return z.strictObject({
    role: messageRole,
    content: z
      .string()
      .refine((c) => c.trim().length > 0, 'must not be empty')
      .refine((c) => Buffer.byteLength(c) <= maxContentBytes, `must be at most ${maxContentBytes} bytes (UTF-8)`)
      .refine((c) => !c.includes('\u0000'), 'must not contain NUL characters'),
  });
}

const readQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_READ_LIMIT).default(DEFAULT_READ_LIMIT),
});

const messageSchema = z.object({ id: z.string(), seq: z.number().int(), role: messageRole, content: z.string(), createdAt: z.string() });

/** Session messages (README "Messages"): the cache answers the raw JSON entries it holds. */
export function messageRoutes(messages: MessageService, settings: { maxContentBytes: number }): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/sessions/:sessionId/messages',
      tag: 'messages',
      summary: 'Append a message to a session: cached at once, written to the DB behind (or directly when Redis is down).',
      params: sessionParams,
      body: appendBody(settings.maxContentBytes),
      revocation: 'in-handler',
      responses: { 201: { description: 'the accepted message', schema: messageSchema }, 503: { description: 'neither the persist queue nor the database is available' } },
      handler: async ({ params, body, auth }) => {
        const { entry } = await messages.append(params.sessionId, body.role, body.content, auth?.revocation);
        return { status: 201, json: entry };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/sessions/:sessionId/messages',
      tag: 'messages',
      summary: 'The newest `limit` messages of a session, oldest first, from the cache or (miss, Redis down) the DB.',
      params: sessionParams,
      query: readQuery,
      revocation: 'in-handler',
      responses: { 200: { description: 'messages', schema: z.object({ messages: z.array(messageSchema), source: z.enum(['cache', 'db']) }) } },
      handler: async ({ params, query, auth }) => {
        const { source, entries } = await messages.read(params.sessionId, query.limit, auth?.revocation);
        return { json: readAnswerJson(entries, source) };
      },
    }),
  ];
}

/** The message routes of an API process, over its own message service. */
export function messageRoutesOf(ctx: PlatformContext): AnyRoute[] {
  return messageRoutes(createMessageService(ctx), ctx.config.messages);
}
