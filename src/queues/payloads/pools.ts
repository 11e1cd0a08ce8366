import { z } from 'zod';

export const poolType = z.enum(['titles', 'contents']);

/** Refill one pool (type, group) from the DB. */
export const poolRefillPayload = z.object({ type: poolType, groupId: z.number().int().min(0) });
export type PoolRefillPayload = z.infer<typeof poolRefillPayload>;

/** Mark the consumed ids recorded for one pool in the DB. */
export const poolConsumedPayload = z.object({ type: poolType, groupId: z.number().int().min(0) });
export type PoolConsumedPayload = z.infer<typeof poolConsumedPayload>;
