import { z } from 'zod';
import { declareQueue } from '../declare-queue.js';

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

export const feedQueues = {
  feedRefresh: declareQueue({
    name: 'feed-refresh',
    family: 'feeds',
    role: 'feeds',
    description: 'Refresh of one feed: conditional GET, parse, upsert articles, schedule the next refresh.',
    payload: feedRefreshPayload,
    // A feed's refreshes share its partition: its deduplication keys must stay in one queue.
    partitionKey: (job) => job.feedId,
    // The backoff strategy, which reads the feeds' own retry error, is the role's (src/feeds/role.ts).
    // A refresh stalls only when its process dies; give the job a second chance before failing it.
    worker: { concurrency: (config) => config.feeds.concurrency, maxStalledCount: 2 },
    manualAdd: { refused: 'a feed has one pending refresh; POST /api/queue/schedule-feed {feed_id, force_immediate} refreshes it now' },
    confirmAdds: true,
  }),
};
