/**
 * Keeps the newest ARTICLES_KEEP_PER_FEED articles of every feed (newest: published date, then
 * id, the order the API lists them in) and deletes the older ones; run by the
 * `feeds-trim-articles` maintenance task (maintenance-tasks.ts). Feeds are found by their article count, which refreshes raise and this
 * lowers by what it deleted (so a refresh landing meanwhile keeps its own increment). Each feed is
 * one statement, so a crash leaves every feed either trimmed or not, and the next run goes on.
 */
import type { Database } from '../db/client.js';

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

export async function trimArticles(db: Pick<Database, 'pool'>, keepPerFeed: number): Promise<{ feeds: number; deleted: number }> {
  const { rows: feeds } = await db.pool.query<{ id: number }>('SELECT id FROM feeds WHERE article_count > $1 ORDER BY id', [keepPerFeed]);
  let deleted = 0;
  for (const { id } of feeds) {
    const { rows } = await db.pool.query<{ deleted: number }>(TRIM_FEED, [id, keepPerFeed]);
    deleted += rows[0]?.deleted ?? 0;
  }
  return { feeds: feeds.length, deleted };
}
