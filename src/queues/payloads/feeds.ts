import { z } from 'zod';

/** A refresh of one feed. `trigger` says who asked: the periodic chain, a user, or the subscription. */
export const feedRefreshPayload = z.object({
  feedId: z.number().int().positive(),
  trigger: z.enum(['periodic', 'manual', 'initial']),
});
export type FeedRefreshPayload = z.infer<typeof feedRefreshPayload>;
