/**
 * Keeps the newest ARTICLES_KEEP_PER_FEED articles of every feed (newest: published date, then
 * id, the order the API lists them in) and deletes the older ones; run by the
 * `feeds-trim-articles` maintenance task (maintenance-tasks.ts). Feeds are found by their article count, which refreshes raise and this
 * lowers by what it deleted (so a refresh landing meanwhile keeps its own increment). Each feed is
 * one statement, so a crash leaves every feed either trimmed or not, and the next run goes on.
 */
import type { ArticleStore } from './article-store.js';

export async function trimArticles(articles: Pick<ArticleStore, 'feedsOver' | 'trimFeed'>, keepPerFeed: number): Promise<{ feeds: number; deleted: number }> {
  const feeds = await articles.feedsOver(keepPerFeed);
  let deleted = 0;
  for (const id of feeds) deleted += await articles.trimFeed(id, keepPerFeed);
  return { feeds: feeds.length, deleted };
}
