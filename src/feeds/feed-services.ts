/** The feeds' collaborators, built by wireFeeds (wiring.ts) for each user of them. */
import type { ArticleStore } from './article-store.js';
import type { DomainGate } from './domain-gate.js';
import type { FeedLock } from './feed-lock.js';
import type { FeedScheduler } from './feed-scheduler.js';
import type { FeedStore } from './feed-store.js';

export interface FeedServices {
  feeds: FeedStore;
  articles: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
}
