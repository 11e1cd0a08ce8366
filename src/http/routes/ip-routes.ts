/**
 * Crawl routes: IPs (titles or franchises tracked on a marketplace), manual crawls, their
 * items and the leaderboards. Thin: validate, call the pipeline domain's IpService, map.
 */
import { z } from 'zod';
import type { IpService } from '../../pipeline/ip-service.js';
import { LEADERBOARD_TYPES } from '../../pipeline/ip-queries.js';
import { decimalInt, defineRoute, idParam, queryBool, type AnyRoute } from '../route.js';

const ipParams = z.object({ id: idParam });
const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `at most ${max} characters`);
const page = { limit: decimalInt(1, 500).default(100), offset: decimalInt(0, 1_000_000_000).default(0) };

/** `weights`: the weight range (SCHEDULER_WEIGHT_MIN/MAX) a request may set. */
export function ipRoutes(ips: IpService, weights: { weightMin: number; weightMax: number }): AnyRoute[] {
  const { weightMin, weightMax } = weights;
  const weight = z.number().min(Math.min(weightMin, weightMax)).max(Math.max(weightMin, weightMax));
  const createBody = z.strictObject({ name: text(200), keyword: text(200), weight: weight.optional() });
  const patchBody = z
    .strictObject({ name: text(200).optional(), keyword: text(200).optional(), weight: weight.optional(), active: z.boolean().optional() })
    .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'give at least one of name, keyword, weight, active' });
  const listQuery = z.strictObject({ active: queryBool.optional(), ...page });
  const itemsQuery = z.strictObject({ status: z.enum(['on_sale', 'sold']).optional(), ...page });
  const leaderboardQuery = z.strictObject({
    type: z.enum(LEADERBOARD_TYPES).default('liquidity'),
    hours: decimalInt(1, 168).default(24),
    limit: decimalInt(1, 100).default(20),
  });

  return [
    defineRoute({
      method: 'post',
      path: '/api/ips',
      tag: 'crawl',
      access: 'admin',
      summary: 'Track an IP: its first crawl is scheduled at once.',
      body: createBody,
      responses: {
        201: { description: 'the IP with its interval, next crawl and current crawl' },
        400: { description: 'bad input (field named)' },
        503: { description: 'Redis unavailable (or, with REDIS_REPLICA_ACKS, the first crawl not confirmed): no IP is created; retry after Retry-After' },
      },
      handler: async ({ body }) => ({ status: 201, body: await ips.create(body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/ips',
      tag: 'crawl',
      access: 'user',
      summary: 'IPs, by id.',
      query: listQuery,
      responses: { 200: { description: '{total, ips}' } },
      handler: async ({ query }) => ({ body: await ips.list(query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/ips/:id',
      tag: 'crawl',
      access: 'user',
      summary: 'One IP: weight, interval, next and last crawl, last 24 hourly stats, recent alerts (cached), and its current crawl (live).',
      params: ipParams,
      responses: { 200: { description: 'IP detail; header X-Cache: hit or miss' }, 404: { description: 'no such IP' } },
      handler: async ({ params }) => {
        const { body, cached } = await ips.detail(params.id);
        return { body, headers: { 'x-cache': cached ? 'hit' : 'miss' } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/ips/:id',
      tag: 'crawl',
      access: 'admin',
      summary: 'Change name, keyword, weight (recomputes the interval and moves the pending crawl) or active (stops or restarts crawling).',
      params: ipParams,
      body: patchBody,
      responses: { 200: { description: 'the IP' }, 400: { description: 'bad input (field named)' }, 404: { description: 'no such IP' } },
      handler: async ({ params, body }) => ({ body: await ips.update(params.id, body) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/ips/:id',
      tag: 'crawl',
      access: 'admin',
      summary: 'Delete an IP with its snapshots, stats and alerts; its pending crawl is removed.',
      params: ipParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such IP' } },
      handler: async ({ params }) => {
        await ips.remove(params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/ips/:id/crawl',
      tag: 'crawl',
      access: 'admin',
      summary: 'Crawl now: the pending crawl is moved forward (or a waiting/running one reused); never a second crawl.',
      params: ipParams,
      responses: {
        202: { description: '{task_id, status: queued|moved_forward|already_queued|running}' },
        404: { description: 'no such IP' },
        409: { description: 'the IP is inactive' },
      },
      handler: async ({ params }) => ({ status: 202, body: await ips.crawlNow(params.id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/ips/:id/items',
      tag: 'crawl',
      access: 'user',
      summary: 'Item snapshots of an IP, most recently seen first.',
      params: ipParams,
      query: itemsQuery,
      responses: { 200: { description: '{ipId, total, items}' }, 404: { description: 'no such IP' } },
      handler: async ({ params, query }) => ({ body: await ips.items(params.id, query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/leaderboard',
      tag: 'crawl',
      access: 'user',
      summary: 'IPs ranked by liquidity (outflow / inflow), inflow or outflow over the last `hours` hours (cached, invalidated by the pipeline).',
      query: leaderboardQuery,
      responses: { 200: { description: '{type, hours, entries}; header X-Cache: hit or miss' } },
      handler: async ({ query }) => {
        const { body, cached } = await ips.leaderboard(query.type, query.hours, query.limit);
        return { body, headers: { 'x-cache': cached ? 'hit' : 'miss' } };
      },
    }),
  ];
}
