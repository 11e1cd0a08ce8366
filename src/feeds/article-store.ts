/**
 * Articles and the feed row's refresh bookkeeping in PostgreSQL.
 *
 * Articles are upserted set-based, one INSERT ... SELECT FROM unnest(...) ON CONFLICT (url, user_id)
 * per batch: a refresh of N items is ceil(N / FEED_UPSERT_BATCH_SIZE) statements. An article
 * that exists is only rewritten when something in it changed, and `RETURNING (xmax = 0)` tells
 * inserted rows from updated ones, so re-processing the same content inserts nothing and
 * counts nothing twice. Rows are written with the current SANITIZER_VERSION: what the parser
 * hands over is already sanitized (parse-feed.ts). An article keeps the feed it was first seen in.
 *
 * The statements every refresh runs (load the feed, upsert, record the success) go straight to
 * the pg pool Prisma itself runs on: Prisma's client costs ~0.4-0.6 ms of CPU per query on top
 * of pg's, about 1.5 ms a refresh, which the feed benchmark's CPU-bound VM notices. They are
 * named (prepared once per connection, not parsed and planned again each time). The rarer
 * bookkeeping (304, failures) stays with Prisma.
 */
import type { Database, PrismaClient } from '../db/client.js';
import type { Feed } from '../generated/prisma/client.js';
import type { ParsedArticle } from './parse-feed.js';
import { SANITIZER_VERSION } from './sanitize-content.js';

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

/** The feed row was deleted while its refresh ran. */
export class FeedGoneError extends Error {
  constructor(feedId: number) {
    super(`feed ${feedId} no longer exists`);
  }
}

/** Postgres error "insert or update violates foreign key", or a row not found: the feed was deleted meanwhile. */
export function isFeedGone(err: unknown): boolean {
  if (err instanceof FeedGoneError) return true;
  const e = err as { code?: string; meta?: { code?: string }; message?: string };
  return e?.code === 'P2025' || e?.code === '23503' || e?.meta?.code === '23503' || /violates foreign key constraint/.test(e?.message ?? '');
}

/** The feeds columns as the Feed model names them. */
const FEED_COLUMNS = `id, user_id AS "userId", url, title, site_url AS "siteUrl", refresh_interval_minutes AS "refreshIntervalMinutes",
  status, last_fetched_at AS "lastFetchedAt", next_refresh_at AS "nextRefreshAt", last_error AS "lastError",
  error_count AS "errorCount", etag, last_modified AS "lastModified", article_count AS "articleCount",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export class ArticleStore {
  private readonly prisma: PrismaClient;
  private readonly pool: Database['pool'];

  constructor(
    db: Pick<Database, 'prisma' | 'pool'>,
    private readonly batchSize: number,
  ) {
    this.prisma = db.prisma;
    this.pool = db.pool;
  }

  async findFeed(feedId: number): Promise<Feed | null> {
    const { rows } = await this.pool.query<Feed>({ name: 'feeds-find', text: `SELECT ${FEED_COLUMNS} FROM feeds WHERE id = $1`, values: [feedId] });
    return rows[0] ?? null;
  }

  async upsertArticles(feed: Pick<Feed, 'id' | 'userId'>, articles: ParsedArticle[]): Promise<UpsertCounts> {
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0 };
    for (let i = 0; i < articles.length; i += this.batchSize) {
      const batch = articles.slice(i, i + this.batchSize);
      const { rows } = await this.pool.query<{ inserted: boolean }>({
        name: 'feeds-upsert-articles',
        text: `INSERT INTO articles (feed_id, user_id, url, guid, title, author, summary, content, published_at, enclosures, sanitizer_version, updated_at)
        SELECT $1, $2, a.url, a.guid, a.title, a.author, a.summary, a.content, a.published_at, a.enclosures, $11, now()
        FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::jsonb[])
          AS a(url, guid, title, author, summary, content, published_at, enclosures)
        ON CONFLICT (url, user_id) DO UPDATE SET
          guid = EXCLUDED.guid, title = EXCLUDED.title, author = EXCLUDED.author, summary = EXCLUDED.summary,
          content = EXCLUDED.content, published_at = EXCLUDED.published_at, enclosures = EXCLUDED.enclosures,
          sanitizer_version = EXCLUDED.sanitizer_version, updated_at = now()
        WHERE (articles.guid, articles.title, articles.author, articles.summary, articles.content, articles.published_at, articles.enclosures, articles.sanitizer_version)
          IS DISTINCT FROM (EXCLUDED.guid, EXCLUDED.title, EXCLUDED.author, EXCLUDED.summary, EXCLUDED.content, EXCLUDED.published_at, EXCLUDED.enclosures, EXCLUDED.sanitizer_version)
        RETURNING (xmax = 0) AS inserted`,
        values: [
          feed.id,
          feed.userId,
          batch.map((a) => a.url),
          batch.map((a) => a.guid),
          batch.map((a) => a.title),
          batch.map((a) => a.author),
          batch.map((a) => a.summary),
          batch.map((a) => a.content),
          batch.map((a) => a.publishedAt?.toISOString() ?? null),
          batch.map((a) => JSON.stringify(a.enclosures)),
          SANITIZER_VERSION,
        ],
      });
      const inserted = rows.filter((r) => r.inserted).length;
      counts.inserted += inserted;
      counts.updated += rows.length - inserted;
      counts.unchanged += batch.length - rows.length;
    }
    return counts;
  }

  /** A successful refresh: status ok, errors cleared, validators and counts updated. */
  async recordSuccess(feed: Feed, facts: SuccessFacts): Promise<void> {
    const { rowCount } = await this.pool.query({
      name: 'feeds-record-success',
      text: `UPDATE feeds SET status = 'ok', last_fetched_at = $2, next_refresh_at = $3, error_count = 0, last_error = NULL,
        etag = $4, last_modified = $5, article_count = article_count + $6,
        title = CASE WHEN title IS NULL AND $7::text IS NOT NULL THEN $7 ELSE title END,
        site_url = COALESCE($8, site_url), updated_at = now()
      WHERE id = $1`,
      values: [feed.id, facts.fetchedAt, facts.nextRefreshAt, facts.etag, facts.lastModified, facts.inserted, facts.title, facts.siteUrl],
    });
    if (!rowCount) throw new FeedGoneError(feed.id);
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
