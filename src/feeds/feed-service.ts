/**
 * What the REST API does with feeds, for one user at a time: subscribe (and schedule the first
 * refresh at once), read, change the interval (re-schedules), delete (stops refreshes), list
 * articles, and ask for a refresh (schedule-feed, reference: queue.py schedule_feed_refresh).
 * A feed of another user is answered exactly like a missing one (404).
 */
import type { Config } from '../config/index.js';
import { ConflictError, NotFoundError, UnauthenticatedError } from '../errors.js';
import type { Article, Feed } from '../generated/prisma/client.js';
import { domainOf } from './domain-gate.js';
import type { FeedServices } from './feed-services.js';
import { delayUntil, dueAfterIntervalChange, dueAt } from './next-refresh.js';
import type { ParsedArticle } from './parse-feed.js';

export interface FeedView {
  id: number;
  url: string;
  title: string | null;
  siteUrl: string | null;
  refreshIntervalMinutes: number;
  status: Feed['status'];
  lastFetchedAt: Date | null;
  nextRefreshAt: Date | null;
  lastError: string | null;
  errorCount: number;
  articleCount: number;
  etag: string | null;
  lastModified: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An article as the API returns it: what the parser read, plus the stored row's ids and times. */
export interface ArticleView extends ParsedArticle {
  id: string;
  feedId: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScheduleReply {
  task_id: string;
  status: 'queued' | 'already_running' | 'already_scheduled';
  delay_seconds: number;
}

export function feedView(f: Feed): FeedView {
  return {
    id: f.id,
    url: f.url,
    title: f.title,
    siteUrl: f.siteUrl,
    refreshIntervalMinutes: f.refreshIntervalMinutes,
    status: f.status,
    lastFetchedAt: f.lastFetchedAt,
    nextRefreshAt: f.nextRefreshAt,
    lastError: f.lastError,
    errorCount: f.errorCount,
    articleCount: f.articleCount,
    etag: f.etag,
    lastModified: f.lastModified,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
  };
}

export function articleView(a: Article): ArticleView {
  return {
    id: a.id.toString(),
    feedId: a.feedId,
    url: a.url,
    guid: a.guid,
    title: a.title,
    author: a.author,
    summary: a.summary,
    content: a.content,
    publishedAt: a.publishedAt,
    enclosures: a.enclosures as unknown as ArticleView['enclosures'],
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

export interface FeedServiceDeps {
  services: FeedServices;
  settings: Config['feeds'];
}

export class FeedService {
  constructor(private readonly deps: FeedServiceDeps) {}

  private async own(userId: number, feedId: number, field: string): Promise<Feed> {
    const feed = await this.deps.services.feeds.findOwned(userId, feedId);
    if (!feed) throw new NotFoundError('feed_not_found', `no feed ${feedId}`, { field });
    return feed;
  }

  /**
   * Subscribes the user and schedules the first refresh now (the start of the periodic chain).
   * A user has at most FEEDS_MAX_PER_USER feeds, however many subscriptions arrive at once
   * (feed-store.ts).
   */
  async subscribe(
    userId: number,
    input: { url: string; title?: string | undefined; refreshIntervalMinutes?: number | undefined },
  ): Promise<FeedView & { taskId: string }> {
    const { services, settings } = this.deps;
    const created = await services.feeds.createWithinLimit(
      userId,
      {
        url: input.url,
        title: input.title ?? null,
        refreshIntervalMinutes: input.refreshIntervalMinutes ?? settings.defaultIntervalMinutes,
        nextRefreshAt: new Date(),
      },
      settings.maxPerUser,
    );
    if (created.kind === 'unknown_user') throw new UnauthenticatedError('unknown_user', "the token's user does not exist");
    if (created.kind === 'limit_reached')
      throw new ConflictError('feed_limit_reached', `you have ${settings.maxPerUser} feeds, the most a user may have (FEEDS_MAX_PER_USER)`, { field: 'url' });
    if (created.kind === 'exists') throw new ConflictError('feed_exists', 'you already subscribe to this URL', { field: 'url' });
    const { feed } = created;
    try {
      const task = await services.scheduler.schedulePeriodic(feed.id, 0, { trigger: 'initial', domain: domainOf(feed.url) });
      return { ...feedView(feed), taskId: task.taskId };
    } catch (err) {
      // No subscription without its refresh chain: undo, and let the caller retry.
      await services.feeds.delete(feed.id).catch(() => undefined);
      throw err;
    }
  }

  async list(userId: number): Promise<FeedView[]> {
    return (await this.deps.services.feeds.listOwned(userId)).map(feedView);
  }

  async get(userId: number, feedId: number): Promise<FeedView> {
    return feedView(await this.own(userId, feedId, 'id'));
  }

  /** Changes the title and/or the interval; a new interval moves the pending refresh now. */
  async update(userId: number, feedId: number, changes: { title?: string | null | undefined; refreshIntervalMinutes?: number | undefined }): Promise<FeedView> {
    const { services, settings } = this.deps;
    const before = await this.own(userId, feedId, 'id');
    let feed = await services.feeds.update(feedId, {
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.refreshIntervalMinutes !== undefined ? { refreshIntervalMinutes: changes.refreshIntervalMinutes } : {}),
    });
    if (changes.refreshIntervalMinutes !== undefined && changes.refreshIntervalMinutes !== before.refreshIntervalMinutes) {
      const now = new Date();
      const due = dueAfterIntervalChange(feed, before.refreshIntervalMinutes, settings.maxBackoffMinutes, now);
      await services.scheduler.schedulePeriodic(feedId, delayUntil(due, now), { reschedule: true, domain: domainOf(feed.url) });
      feed = await services.feeds.update(feedId, { nextRefreshAt: due < now ? now : due });
    }
    return feedView(feed);
  }

  /** Deletes the feed with its articles and removes its pending refreshes. */
  async remove(userId: number, feedId: number): Promise<void> {
    await this.own(userId, feedId, 'id');
    await this.deps.services.feeds.deleteOwned(userId, feedId);
    await this.deps.services.scheduler.unschedule(feedId);
  }

  async articles(userId: number, feedId: number, limit: number): Promise<ArticleView[]> {
    await this.own(userId, feedId, 'id');
    return (await this.deps.services.articles.listOwned(userId, feedId, limit)).map(articleView);
  }

  /**
   * schedule-feed: `already_running` while the feed's lock is held; with `force` a manual
   * refresh ahead of periodic work (an already pending one is reused); without it the periodic
   * refresh at last fetch + interval (0 for a new feed), `already_scheduled` when one is pending.
   */
  async requestRefresh(userId: number, feedId: number, force: boolean): Promise<ScheduleReply> {
    const { scheduler, lock, feeds } = this.deps.services;
    const feed = await this.own(userId, feedId, 'feed_id');
    const holder = await lock.holder(feedId);
    if (holder) return { task_id: holder, status: 'already_running', delay_seconds: 0 };

    if (force) {
      const task = await scheduler.scheduleManual(feedId, domainOf(feed.url));
      return task.created ? { task_id: task.taskId, status: 'queued', delay_seconds: 0 } : this.existing(task.taskId);
    }
    const now = new Date();
    const delay = delayUntil(dueAt(feed, now), now);
    const task = await scheduler.schedulePeriodic(feedId, delay, { domain: domainOf(feed.url) });
    if (!task.created) return this.existing(task.taskId);
    await feeds.setNextRefresh(feedId, new Date(now.getTime() + delay));
    return { task_id: task.taskId, status: 'queued', delay_seconds: Math.ceil(delay / 1000) };
  }

  private async existing(taskId: string): Promise<ScheduleReply> {
    const { state, runAt } = await this.deps.services.scheduler.describe(taskId);
    return {
      task_id: taskId,
      status: state === 'active' ? 'already_running' : 'already_scheduled',
      delay_seconds: runAt ? Math.max(0, Math.ceil((runAt.getTime() - Date.now()) / 1000)) : 0,
    };
  }
}
