import { z } from 'zod';
import type { FeedService } from '../../feeds/feed-service.js';
import { decimalInt, defineRoute, idParam, INT32_MAX, type AnyRoute } from '../route.js';

/** An absolute http(s) URL, stored in its normalized form (so that spelling variants are one feed). */
const feedUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL')
  .transform((v) => new URL(v).href);

const interval = z.number().int('must be a whole number of minutes').min(1).max(1440);
const title = z.string().trim().min(1).max(500);

const createBody = z.strictObject({
  url: feedUrl,
  title: title.optional(),
  refreshIntervalMinutes: interval.optional(),
});
const patchBody = z
  .strictObject({ title: title.nullable().optional(), refreshIntervalMinutes: interval.optional() })
  .refine((b) => b.title !== undefined || b.refreshIntervalMinutes !== undefined, { message: 'give title and/or refreshIntervalMinutes', path: ['(body)'] });
const feedParams = z.object({ id: idParam });
const articlesQuery = z.strictObject({ limit: decimalInt(1, 500).default(50) });
const scheduleBody = z.strictObject({
  feed_id: z.union([z.number().int().min(1).max(INT32_MAX), idParam], {
    error: `must be a positive integer up to ${INT32_MAX} (a JSON number or a string of decimal digits)`,
  }),
  force_immediate: z.boolean().default(false),
});

const feedReply = z.object({
  id: z.number(),
  url: z.string(),
  title: z.string().nullable(),
  siteUrl: z.string().nullable(),
  refreshIntervalMinutes: z.number(),
  status: z.enum(['pending', 'ok', 'retrying', 'error']),
  lastFetchedAt: z.string().nullable(),
  nextRefreshAt: z.string().nullable(),
  lastError: z.string().nullable(),
  errorCount: z.number(),
  articleCount: z.number(),
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const scheduleReply = z.object({
  task_id: z.string(),
  status: z.enum(['queued', 'already_running', 'already_scheduled']),
  delay_seconds: z.number(),
});

export function feedRoutes(feeds: FeedService): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/feeds',
      tag: 'feeds',
      access: 'user',
      summary: 'Subscribe to a feed; its first refresh is scheduled at once.',
      body: createBody,
      responses: {
        201: { description: 'the feed, with taskId of its first refresh', schema: feedReply.extend({ taskId: z.string() }) },
        409: { description: 'you already subscribe to this URL' },
      },
      handler: async ({ auth, body }) => ({ status: 201, body: await feeds.subscribe(auth!.userId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/feeds',
      tag: 'feeds',
      access: 'user',
      summary: 'Your feeds.',
      responses: { 200: { description: 'feeds', schema: z.object({ feeds: z.array(feedReply) }) } },
      handler: async ({ auth }) => ({ body: { feeds: await feeds.list(auth!.userId) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/feeds/:id',
      tag: 'feeds',
      access: 'user',
      summary: 'One feed: status, errorCount, lastError, lastFetchedAt, nextRefreshAt.',
      params: feedParams,
      responses: { 200: { description: 'feed', schema: feedReply }, 404: { description: 'no such feed of yours' } },
      handler: async ({ auth, params }) => ({ body: await feeds.get(auth!.userId, params.id) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/api/feeds/:id',
      tag: 'feeds',
      access: 'user',
      summary: 'Change the title or the refresh interval (the pending refresh moves at once).',
      params: feedParams,
      body: patchBody,
      responses: { 200: { description: 'feed', schema: feedReply }, 404: { description: 'no such feed of yours' } },
      handler: async ({ auth, params, body }) => ({ body: await feeds.update(auth!.userId, params.id, body) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/feeds/:id',
      tag: 'feeds',
      access: 'user',
      summary: 'Unsubscribe: deletes the feed and its articles and stops its refreshes.',
      params: feedParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such feed of yours' } },
      handler: async ({ auth, params }) => {
        await feeds.remove(auth!.userId, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/feeds/:id/articles',
      tag: 'feeds',
      access: 'user',
      summary: 'Articles of a feed, newest first.',
      params: feedParams,
      query: articlesQuery,
      responses: { 200: { description: 'articles' }, 404: { description: 'no such feed of yours' } },
      handler: async ({ auth, params, query }) => ({ body: { articles: await feeds.articles(auth!.userId, params.id, query.limit) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/queue/schedule-feed',
      tag: 'feeds',
      access: 'user',
      summary: 'Ask for a refresh: force_immediate runs one ahead of periodic work; otherwise the periodic one at last fetch + interval.',
      body: scheduleBody,
      responses: {
        202: { description: 'queued, or the refresh already running or pending', schema: scheduleReply },
        404: { description: 'no such feed of yours' },
      },
      handler: async ({ auth, body }) => ({ status: 202, body: await feeds.requestRefresh(auth!.userId, body.feed_id, body.force_immediate) }),
    }),
  ];
}

/** The feed routes over the platform context (the one line in routes/index.ts). */
