/**
 * What one refresh job tells people: its progress and log lines (Bull Board, GET /api/tasks/:id),
 * its result, and the refreshes metric. Progress is best effort: a Redis hiccup while reporting
 * never fails the refresh.
 */
import type { Job } from 'bullmq';
import type { FeedRefreshPayload } from '../queues/payloads/feeds.js';

export interface RefreshResult {
  feedId: number;
  trigger: FeedRefreshPayload['trigger'];
  outcome: 'refreshed' | 'not_modified' | 'skipped';
  /** Why a refresh was skipped: another job holds the lock, or the feed was deleted. */
  reason?: 'locked' | 'feed_deleted';
  /** The job holding the lock when skipped for that reason. */
  lockedBy?: string;
  httpStatus?: number;
  format?: string;
  /** The encoding the document was read in. */
  encoding?: string;
  items?: number;
  inserted?: number;
  updated?: number;
  unchanged?: number;
  skippedItems?: number;
  /** Items past FEED_MAX_ITEMS_PER_DOCUMENT (or ARTICLES_KEEP_PER_FEED, when lower) that were not stored. */
  truncatedItems?: number;
  bytes?: number;
  durationMs: number;
  nextRefreshAt?: string;
}

/** A refresh's outcome, without what every result carries (feed, trigger, duration). */
export type RefreshOutcome = Omit<RefreshResult, 'feedId' | 'trigger' | 'durationMs'>;

/** Where a refresh stands (the job's progress). */
export interface RefreshProgress {
  step: 'fetched' | 'stored' | 'not_modified' | 'failed';
  httpStatus?: number;
  bytes?: number;
  items?: number;
  inserted?: number;
  updated?: number;
  notModified?: boolean;
  nextRefreshAt?: string;
  error?: string;
}

export interface RefreshMetrics {
  refreshes: { inc(labels: { outcome: string }): void };
  articles: { inc(n: number): void };
}

export class RefreshReport {
  private readonly started = performance.now();
  private progress: RefreshProgress | undefined;

  constructor(
    private readonly job: Job<FeedRefreshPayload, RefreshResult>,
    private readonly metrics: RefreshMetrics | undefined,
  ) {}

  /** Adds to the job's progress and writes one line to its log. */
  async step(next: RefreshProgress, line: string): Promise<void> {
    this.progress = { ...this.progress, ...next };
    await Promise.all([this.job.updateProgress({ ...this.progress }), this.job.log(line)]).catch(() => undefined);
  }

  /** The job's result, counted by outcome. */
  result(outcome: RefreshOutcome): RefreshResult {
    this.metrics?.refreshes.inc({ outcome: outcome.outcome === 'skipped' ? `skipped_${outcome.reason}` : outcome.outcome });
    const { feedId, trigger } = this.job.data;
    return { feedId, trigger, ...outcome, durationMs: Math.round(performance.now() - this.started) };
  }

  /** A final failure, counted by its class (it has no result: the job fails). */
  failed(label: string): void {
    this.metrics?.refreshes.inc({ outcome: `failed_${label}` });
  }

  /** Articles inserted or changed. */
  stored(articles: number): void {
    this.metrics?.articles.inc(articles);
  }
}
