import { z } from 'zod';
import type { MessageService } from '../../messages/message-service.js';
import { readAnswerJson } from '../../messages/message-entry.js';
import type { RefusedMessagesApi } from '../../messages/wiring.js';
import { NotFoundError } from '../../errors.js';
import { messageRole } from '../../queues/declarations/messages.js';
import { decimalInt, defineRoute, type AnyRoute } from '../route.js';

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
      // NUL and lone surrogates are refused for every body before its schema (route-input.ts).
      .refine((c) => Buffer.byteLength(c) <= maxContentBytes, `must be at most ${maxContentBytes} bytes (UTF-8)`),
  });
}

const readQuery = z.strictObject({
  limit: decimalInt(1, MAX_READ_LIMIT).default(DEFAULT_READ_LIMIT),
});

const messageSchema = z.object({ id: z.string(), seq: z.number().int(), role: messageRole, content: z.string(), createdAt: z.string() });

/** Session messages (docs/messages.md): the cache answers the raw JSON entries it holds. */
export function messageRoutes(messages: MessageService, settings: { maxContentBytes: number }): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/sessions/:sessionId/messages',
      tag: 'messages',
      access: 'user',
      summary: 'Append a message to a session: cached at once, written to the DB behind (or directly when Redis is down).',
      params: sessionParams,
      body: appendBody(settings.maxContentBytes),
      revocation: 'in-handler',
      responses: {
        201: { description: 'the accepted message', schema: messageSchema },
        503: { description: 'neither the persist queue nor the database is available' },
      },
      handler: async ({ params, body, auth }) => {
        const { entry } = await messages.append(auth!.userId, params.sessionId, body.role, body.content, auth!.revocation);
        return { status: 201, json: entry };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/sessions/:sessionId/messages',
      tag: 'messages',
      access: 'user',
      summary: 'The newest `limit` messages of a session, oldest first, from the cache or (miss, Redis down) the DB.',
      params: sessionParams,
      query: readQuery,
      revocation: 'in-handler',
      responses: { 200: { description: 'messages', schema: z.object({ messages: z.array(messageSchema), source: z.enum(['cache', 'db']) }) } },
      handler: async ({ params, query, auth }) => {
        const { source, entries } = await messages.read(auth!.userId, params.sessionId, query.limit, auth!.revocation);
        return { json: readAnswerJson(entries, source) };
      },
    }),
  ];
}

const refusedQuery = z.strictObject({ limit: decimalInt(1, 1000).default(100) });
const refusedParams = z.object({ messageId: z.string().min(1).max(64) });

/** Messages the DB refused when drained (admins only): list, put back in their buffers, discard. */
export function refusedMessageRoutes(refused: RefusedMessagesApi): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/messages/refused',
      tag: 'messages',
      access: 'admin',
      summary:
        'Accepted messages the database refused when their buffer was drained, with the reason; kept until requeued or discarded (wp_messages_refused_total counts them).',
      query: refusedQuery,
      responses: { 200: { description: '{total, messages: [{shard, messageId, sessionId, error, entry}]}' } },
      handler: async ({ query }) => ({ body: await refused.list(query.limit) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/messages/refused/requeue',
      tag: 'messages',
      access: 'admin',
      summary: 'Put every refused message back into its buffer and drain it again (after fixing what refused them).',
      responses: { 200: { description: '{requeued}' } },
      handler: async () => ({ body: { requeued: await refused.requeue() } }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/messages/refused/:messageId',
      tag: 'messages',
      access: 'admin',
      summary: 'Discard one refused message for good.',
      params: refusedParams,
      responses: { 204: { description: 'discarded' }, 404: { description: 'no refused message with this id' } },
      handler: async ({ params }) => {
        if (!(await refused.discard(params.messageId)))
          throw new NotFoundError('not_found', `no refused message "${params.messageId}"`, { field: 'messageId' });
        return { status: 204 };
      },
    }),
  ];
}
