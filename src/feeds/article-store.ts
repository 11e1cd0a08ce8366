/**
 * The articles table: what refreshes store, what the API lists, and the two maintenance
 * passes over stored rows (the trim to the newest ARTICLES_KEEP_PER_FEED of each feed, the
 * clean-up of rows stored by an older sanitizer).
 *
 * Articles are upserted set-based, one INSERT ... SELECT FROM unnest(...) ON CONFLICT (url, user_id)
 * per batch: a refresh of N items is ceil(N / FEED_UPSERT_BATCH_SIZE) statements. An article
 * that exists is only rewritten when something in it changed, and `RETURNING (xmax = 0)` tells
 * inserted rows from updated ones, so re-processing the same content inserts nothing and
 * counts nothing twice. Rows are written with the current SANITIZER_VERSION: what the parser
 * hands over is already sanitized (parse-feed.ts). An article keeps the feed it was first seen in.
 * The upsert goes straight to the pg pool, as a named statement (see feed-store.ts for why).
 */
import type { Database, PrismaClient } from '../db/client.js';
import type { Article, Feed } from '../generated/prisma/client.js';
import type { ParsedArticle } from './parse-feed.js';
import { SANITIZER_VERSION } from './sanitize-content.js';

export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

/** An article as the clean-up reads it, with its feed's URL (the base of relative links). */
export interface StoredArticle {
  id: string;
  title: string | null;
  author: string | null;
  summary: string | null;
  content: string | null;
  feed_url: string;
}

/** Deletes a feed's articles past the newest `$2` and lowers its count by as many, in one statement. */
const TRIM_FEED = `
WITH doomed AS (
  SELECT id FROM articles WHERE feed_id = $1
  ORDER BY published_at DESC NULLS LAST, id DESC
  OFFSET $2
), deleted AS (
  DELETE FROM articles a USING doomed d WHERE a.id = d.id RETURNING 1
)
UPDATE feeds SET article_count = GREATEST(0, article_count - (SELECT count(*) FROM deleted)) WHERE id = $1
RETURNING (SELECT count(*) FROM deleted)::int AS deleted`;

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

  async upsert(feed: Pick<Feed, 'id' | 'userId'>, articles: ParsedArticle[]): Promise<UpsertCounts> {
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

  /** A feed's newest `limit` articles (published date, then id), when `userId` owns them. */
  listOwned(userId: number, feedId: number, limit: number): Promise<Article[]> {
    return this.prisma.article.findMany({
      where: { feedId, userId },
      orderBy: [{ publishedAt: { sort: 'desc', nulls: 'last' } }, { id: 'desc' }],
      take: limit,
    });
  }

  // --- the trim (trim-articles.ts) ---------------------------------------------------------

  /** Feeds holding more than `keepPerFeed` articles (by their count), in id order. */
  async feedsOver(keepPerFeed: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ id: number }>('SELECT id FROM feeds WHERE article_count > $1 ORDER BY id', [keepPerFeed]);
    return rows.map((r) => r.id);
  }

  /** Deletes the feed's articles past the newest `keepPerFeed`, lowering its count by as many; returns how many. */
  async trimFeed(feedId: number, keepPerFeed: number): Promise<number> {
    const { rows } = await this.pool.query<{ deleted: number }>(TRIM_FEED, [feedId, keepPerFeed]);
    return rows[0]?.deleted ?? 0;
  }

  // --- the clean-up (sanitize-stored-articles.ts) ------------------------------------------

  /** Up to `limit` articles stored by a sanitizer older than `version`, in (version, id) order (an index serves it). */
  async storedBefore(version: number, limit: number): Promise<StoredArticle[]> {
    const { rows } = await this.pool.query<StoredArticle>({
      name: 'feeds-sanitize-read',
      text: `SELECT a.id::text AS id, a.title, a.author, a.summary, a.content, f.url AS feed_url
      FROM articles a JOIN feeds f ON f.id = a.feed_id
      WHERE a.sanitizer_version < $1 ORDER BY a.sanitizer_version, a.id LIMIT $2`,
      values: [version, limit],
    });
    return rows;
  }

  /**
   * Writes cleaned texts and `version`, only to rows still below it (a refresh may have rewritten
   * one meanwhile); `updated_at` moves only for rows whose text changed. Returns the rows written.
   */
  async rewriteSanitized(
    version: number,
    rows: { id: string; title: string | null; author: string | null; summary: string | null; content: string | null }[],
  ): Promise<number> {
    const result = await this.pool.query({
      name: 'feeds-sanitize-write',
      text: `UPDATE articles AS a SET title = u.title, author = u.author, summary = u.summary, content = u.content,
        sanitizer_version = $1,
        updated_at = CASE WHEN (a.title, a.author, a.summary, a.content) IS DISTINCT FROM (u.title, u.author, u.summary, u.content)
          THEN now() ELSE a.updated_at END
      FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, title, author, summary, content)
      WHERE a.id = u.id AND a.sanitizer_version < $1`,
      values: [version, rows.map((c) => c.id), rows.map((c) => c.title), rows.map((c) => c.author), rows.map((c) => c.summary), rows.map((c) => c.content)],
    });
    return result.rowCount ?? 0;
  }
}
