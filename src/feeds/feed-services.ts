/** The feed domain's collaborators, built once per process from the platform context. */
import type { PlatformContext } from '../context.js';
import { ArticleStore } from './article-store.js';
import { DomainGate } from './domain-gate.js';
import { FeedLock } from './feed-lock.js';
import { FeedScheduler } from './feed-scheduler.js';
import { FeedStore } from './feed-store.js';

export interface FeedServices {
  feeds: FeedStore;
  articles: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
}

/** A crashed holder frees its domain this long after its request could at most have ended. */
const DOMAIN_LEASE_MARGIN_MS = 5_000;

export function createFeedServices(ctx: Pick<PlatformContext, 'config' | 'db' | 'redis' | 'keys' | 'queues'>): FeedServices {
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
