/**
 * Articles and the feed row's refresh bookkeeping in PostgreSQL.
 *
 * Articles are upserted set-based, one INSERT ... SELECT FROM unnest(...) ON CONFLICT (url, user_id)
 * per batch: a refresh of N items is ceil(N / FEED_UPSERT_BATCH_SIZE) statements. An article
 * that exists is only rewritten when something in it changed, and `RETURNING (xmax = 0)` tells
 * inserted rows from updated ones, so re-processing the same content inserts nothing and
 * counts nothing twice. An article keeps the feed it was first seen in.
 */
import { Prisma, type PrismaClient } from '../db/client.js';
import type { Feed } from '../generated/prisma/client.js';
import type { ParsedArticle } from './parse-feed.js';

export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

export interface SuccessFacts {
  fetchedAt: Date;
  nextRefreshAt: Date;
  etag: string | null;
  lastModified: string | null;
  title: string | null;
  siteUrl: string | null;
  inserted: number;
}

/** Postgres error "insert or update violates foreign key" (the feed was deleted meanwhile). */
export function isFeedGone(err: unknown): boolean {
  const e = err as { code?: string; meta?: { code?: string }; message?: string };
  return e?.code === 'P2025' || e?.code === '23503' || e?.meta?.code === '23503' || /violates foreign key constraint/.test(e?.message ?? '');
}

export class ArticleStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly batchSize: number,
  ) {}

  findFeed(feedId: number): Promise<Feed | null> {
    return this.prisma.feed.findUnique({ where: { id: feedId } });
  }

  async upsertArticles(feed: Pick<Feed, 'id' | 'userId'>, articles: ParsedArticle[]): Promise<UpsertCounts> {
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0 };
    for (let i = 0; i < articles.length; i += this.batchSize) {
      const batch = articles.slice(i, i + this.batchSize);
      const rows = await this.prisma.$queryRaw<{ inserted: boolean }[]>(Prisma.sql`
        INSERT INTO articles (feed_id, user_id, url, guid, title, author, summary, content, published_at, updated_at)
        SELECT ${feed.id}, ${feed.userId}, a.url, a.guid, a.title, a.author, a.summary, a.content, a.published_at, now()
        FROM unnest(
          ${batch.map((a) => a.url)}::text[], ${batch.map((a) => a.guid)}::text[], ${batch.map((a) => a.title)}::text[],
          ${batch.map((a) => a.author)}::text[], ${batch.map((a) => a.summary)}::text[], ${batch.map((a) => a.content)}::text[],
          ${batch.map((a) => a.publishedAt?.toISOString() ?? null)}::timestamptz[]
        ) AS a(url, guid, title, author, summary, content, published_at)
        ON CONFLICT (url, user_id) DO UPDATE SET
          guid = EXCLUDED.guid, title = EXCLUDED.title, author = EXCLUDED.author, summary = EXCLUDED.summary,
          content = EXCLUDED.content, published_at = EXCLUDED.published_at, updated_at = now()
        WHERE (articles.guid, articles.title, articles.author, articles.summary, articles.content, articles.published_at)
          IS DISTINCT FROM (EXCLUDED.guid, EXCLUDED.title, EXCLUDED.author, EXCLUDED.summary, EXCLUDED.content, EXCLUDED.published_at)
        RETURNING (xmax = 0) AS inserted`);
      const inserted = rows.filter((r) => r.inserted).length;
      counts.inserted += inserted;
      counts.updated += rows.length - inserted;
      counts.unchanged += batch.length - rows.length;
    }
    return counts;
  }

  /** A successful refresh: status ok, errors cleared, validators and counts updated. */
  async recordSuccess(feed: Feed, facts: SuccessFacts): Promise<Feed> {
    return this.prisma.feed.update({
      where: { id: feed.id },
      data: {
        status: 'ok',
        lastFetchedAt: facts.fetchedAt,
        nextRefreshAt: facts.nextRefreshAt,
        errorCount: 0,
        lastError: null,
        etag: facts.etag,
        lastModified: facts.lastModified,
        articleCount: { increment: facts.inserted },
        ...(feed.title === null && facts.title ? { title: facts.title } : {}),
        ...(facts.siteUrl ? { siteUrl: facts.siteUrl } : {}),
      },
    });
  }

  /**
   * A 304: the content is unchanged, so articles, ETag and Last-Modified stay; lastFetchedAt
   * moves on (and a previous error is cleared, since the server answered).
   */
  async recordNotModified(feed: Feed, fetchedAt: Date, nextRefreshAt: Date): Promise<Feed> {
    return this.prisma.feed.update({
      where: { id: feed.id },
      data: { lastFetchedAt: fetchedAt, nextRefreshAt, ...(feed.status !== 'ok' || feed.errorCount ? { status: 'ok', errorCount: 0, lastError: null } : {}) },
    });
  }

  /** A refresh that failed for good: status error, one more consecutive error, the reason. */
  async recordFailure(feedId: number, lastError: string): Promise<Feed> {
    return this.prisma.feed.update({
      where: { id: feedId },
      data: { status: 'error', errorCount: { increment: 1 }, lastError: lastError.slice(0, 2000) },
    });
  }

  async setNextRefresh(feedId: number, at: Date): Promise<void> {
    await this.prisma.feed.updateMany({ where: { id: feedId }, data: { nextRefreshAt: at } });
  }
}
