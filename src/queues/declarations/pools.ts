import { z } from 'zod';
import { declareQueue } from '../declare-queue.js';

export const poolType = z.enum(['titles', 'contents']);
/** Group ids are PostgreSQL integers. */
export const poolGroupId = z.number().int().min(0).max(2_147_483_647);

/**
 * The pool-refill queue carries two kinds of job:
 * - `refill`: refill one pool (type, group) from the DB; `recover` asks for the orphan release even
 *   when the pool is long enough (the periodic check saw more reserved rows than pooled ones);
 * - `check`: the periodic sweep (a job scheduler) that looks at every pool and enqueues refills
 *   and consumed-marking where needed.
 */
export const poolRefillPayload = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('refill'), type: poolType, groupId: poolGroupId, recover: z.boolean().optional() }),
  z.object({ kind: z.literal('check') }),
]);
export type PoolRefillPayload = z.infer<typeof poolRefillPayload>;

/** Mark the consumed ids recorded for one pool in the DB. */
export const poolConsumedPayload = z.object({ type: poolType, groupId: poolGroupId });
export type PoolConsumedPayload = z.infer<typeof poolConsumedPayload>;

/** Options of a `check` job: one attempt (the next check comes anyway), few runs kept. */
export const POOL_CHECK_OPTIONS = { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } };

export const poolQueues = {
  poolRefill: declareQueue({
    name: 'pool-refill',
    family: 'pools',
    role: 'pools',
    description: 'Refill of one content pool from the DB.',
    payload: poolRefillPayload,
    schedulers: [{ id: 'pools-check', everyMs: (config) => config.pools.checkIntervalMs, name: 'check', data: { kind: 'check' }, opts: POOL_CHECK_OPTIONS }],
  }),
  poolConsumed: declareQueue({
    name: 'pool-consumed',
    family: 'pools',
    role: 'pools',
    description: 'Marks popped pool rows consumed in the DB, in batches.',
    payload: poolConsumedPayload,
  }),
};
