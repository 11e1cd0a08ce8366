/**
 * The feeds' wiring: their collaborators built from the platform context by each user of them (the
 * feeds role's worker, the feeds maintenance tasks, the API's FeedService and the dead-refresh
 * replay); they hold no state of their own beyond Redis and the database, so several sets may coexist.
 */
import type { PlatformContext } from '../context.js';
import { ArticleStore } from './article-store.js';
import { DomainGate } from './domain-gate.js';
import { FeedLock } from './feed-lock.js';
import { FeedScheduler } from './feed-scheduler.js';
import { FeedService } from './feed-service.js';
import { FeedStore } from './feed-store.js';
import { replayDeadRefresh, type RefreshReplay } from './replay-refresh.js';

export interface FeedServices {
  feeds: FeedStore;
  articles: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
}

/** A crashed holder frees its domain this long after its request could at most have ended. */
const DOMAIN_LEASE_MARGIN_MS = 5_000;

export function wireFeeds(ctx: Pick<PlatformContext, 'config' | 'db' | 'redis' | 'keys' | 'queues'>): FeedServices {
  const s = ctx.config.feeds;
  const gate = new DomainGate(ctx.redis, ctx.keys, { minIntervalMs: s.domainMinIntervalMs, leaseMs: s.fetchTimeoutMs + DOMAIN_LEASE_MARGIN_MS });
  return {
    feeds: new FeedStore(ctx.db),
    articles: new ArticleStore(ctx.db, s.upsertBatchSize),
    lock: new FeedLock(ctx.redis, ctx.keys, s.lockTtlSeconds * 1000),
    gate,
    scheduler: new FeedScheduler({ queues: ctx.queues, redis: ctx.redis, gate, settings: s }),
  };
}

/** What the API asks of the feeds: the subscriptions (FeedService), a dead refresh's replay through its chain, and ownership. */
export interface FeedsApi {
  service: FeedService;
  replayDead(jobId: string): Promise<RefreshReplay>;
  isOwnedBy(userId: number, feedId: number): Promise<boolean>;
}

export function wireFeedsApi(ctx: Pick<PlatformContext, 'config' | 'db' | 'redis' | 'keys' | 'queues'>): FeedsApi {
  const services = wireFeeds(ctx);
  return {
    service: new FeedService({ services, settings: ctx.config.feeds }),
    replayDead: (jobId) => replayDeadRefresh(services, jobId),
    isOwnedBy: (userId, feedId) => services.feeds.isOwnedBy(userId, feedId),
  };
}
