import { z } from 'zod';

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
