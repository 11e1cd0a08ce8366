import { z } from 'zod';

/**
 * A refresh of one feed. `trigger` says who asked: the periodic chain, a user, or the subscription.
 * `domain`, when known, is the host of the feed's URL (which never changes): the refresh takes its
 * domain's turn before its other database work (the feed row is read alongside the turn, as a job
 * that waited wakes at its turn and usually gets it).
 */
export const feedRefreshPayload = z.object({
  feedId: z.number().int().positive(),
  trigger: z.enum(['periodic', 'manual', 'initial']),
  domain: z.string().min(1).max(253).optional(),
});
export type FeedRefreshPayload = z.infer<typeof feedRefreshPayload>;
