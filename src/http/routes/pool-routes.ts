import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import type { PoolService } from '../../pools/pool-service.js';
import { defineRoute, type AnyRoute } from '../route.js';

const poolParams = z.object({
  type: z.enum(['titles', 'contents'], { message: 'must be "titles" or "contents"' }),
  groupId: z
    .string()
    .regex(/^\d{1,10}$/, 'must be a non-negative integer')
    .transform(Number)
    .refine((n) => n <= 2_147_483_647, 'must be at most 2147483647'),
});

const popManyBody = z.strictObject({
  count: z
    .number({ message: 'must be an integer from 1 to 100' })
    .int('must be an integer from 1 to 100')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100'),
});

function importBody(maxItems: number, maxTextBytes: number) {
  const text = z
    .string()
    .min(1, 'must not be empty')
    // NUL and lone surrogates are refused for every body before its schema (route-input.ts).
    .refine((s) => Buffer.byteLength(s, 'utf8') <= maxTextBytes, `must be at most ${maxTextBytes} bytes (UTF-8)`);
  const item = z.strictObject({
    text,
    batchId: z
      .number({ message: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must not be negative')
      .max(2_147_483_647, 'must be at most 2147483647'),
  });
  return z.strictObject({
    items: z.array(item).min(1, 'must hold at least one item').max(maxItems, `must hold at most ${maxItems} items`),
  });
}

const servedItem = z.object({ id: z.number(), text: z.string(), source: z.enum(['pool', 'db']) });

export function poolRoutes(pools: PoolService): AnyRoute[] {
  const { maxImportItems, maxTextBytes } = pools.settings;
  return [
    defineRoute({
      method: 'post',
      path: '/api/pools/:type/:groupId/pop',
      tag: 'pools',
      access: 'user',
      summary:
        'Take the next row of a pool (FIFO, batch_id DESC, id ASC); each row is served once. Falls back to the DB when the pool is empty or Redis is down.',
      params: poolParams,
      revocation: 'in-handler',
      responses: {
        200: { description: 'the row', schema: servedItem },
        404: { description: 'pool_empty: no row left' },
        503: { description: 'pool and database unavailable, or the rows of the pool held back (a late or unconfirmed pop) with none in the database' },
      },
      handler: async ({ params, auth }) => {
        const [item] = await pools.pop(params.type, params.groupId, 1, auth?.revocation);
        if (!item) throw new NotFoundError('pool_empty', `no ${params.type} left in group ${params.groupId}`);
        return { body: item };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/pools/:type/:groupId/pop-many',
      tag: 'pools',
      access: 'user',
      summary: 'Take up to `count` rows (1–100) in one request, with the same guarantees as pop; fewer or none when the rows run out.',
      params: poolParams,
      body: popManyBody,
      revocation: 'in-handler',
      responses: {
        200: { description: 'the rows', schema: z.object({ items: z.array(servedItem) }) },
        503: { description: 'pool and database unavailable, or the rows of the pool held back (a late or unconfirmed pop) with none in the database' },
      },
      handler: async ({ params, body, auth }) => ({ body: { items: await pools.pop(params.type, params.groupId, body.count, auth?.revocation) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/pools/:type/:groupId/items',
      tag: 'pools',
      access: 'admin',
      summary: 'Import rows into a group (available for the pool); all or nothing.',
      params: poolParams,
      body: importBody(maxImportItems, maxTextBytes),
      responses: { 201: { description: 'inserted', schema: z.object({ inserted: z.number() }) } },
      handler: async ({ params, body }) => ({ status: 201, body: { inserted: await pools.importItems(params.type, params.groupId, body.items) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/pools',
      tag: 'pools',
      access: 'admin',
      summary: 'Every pool by type and group: list length, consumed ids not yet marked, rows available and reserved in the DB.',
      responses: { 200: { description: 'pools' } },
      handler: async () => ({ body: { pools: await pools.overview() } }),
    }),
  ];
}
