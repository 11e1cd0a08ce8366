import { z } from 'zod';

/**
 * A refresh of one feed. `trigger` says who asked: the periodic chain, a user, or the subscription.
 * `domain`, when known, is the host of the feed's URL (which never changes): the refresh takes its
 * domain's turn before loading the feed, so a job that has to wait costs no database query.
 */
export const feedRefreshPayload = z.object({
  feedId: z.number().int().positive(),
  trigger: z.enum(['periodic', 'manual', 'initial']),
  domain: z.string().min(1).max(253).optional(),
});
export type FeedRefreshPayload = z.infer<typeof feedRefreshPayload>;
