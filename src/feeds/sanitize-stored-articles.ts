/**
 * The job that cleans articles stored before the current sanitizer: every row whose
 * `sanitizer_version` is below SANITIZER_VERSION (all rows written before sanitizing existed
 * have 0) gets its title and author turned into plain text and its summary and content
 * sanitized, as a refresh would store them today, and is marked with the current version.
 *
 * Run by the leader as the `feeds-sanitize-articles` maintenance task (maintenance-tasks.ts), in
 * batches of FEED_SANITIZE_BATCH_SIZE rows taken in (sanitizer_version, id) order, which an index
 * serves (article-store.ts): with nothing left to clean the job costs one index probe. Idempotent and resumable: a batch is one UPDATE that only touches
 * rows still below the version, so a crash, a lost leadership or a second run repeats nothing
 * and skips rows a refresh rewrote meanwhile (a refresh writes the current version).
 *
 * The base for relative URLs in stored content is the feed's URL: the xml:base and
 * Content-Location a refresh would use are not stored.
 */
import type { ArticleStore } from './article-store.js';
import { SANITIZER_VERSION, sanitizeContent } from './sanitize-content.js';
import { plainText } from './text-construct.js';

export interface SanitizeStoredDeps {
  articles: Pick<ArticleStore, 'storedBefore' | 'rewriteSanitized'>;
  batchSize: number;
  /** Checked before every batch: false stops the job (leadership lost, shutdown). */
  shouldContinue: () => boolean;
}

/** Cleans one batch; returns how many rows it read (fewer than the batch size: done). */
async function cleanBatch(deps: SanitizeStoredDeps): Promise<{ read: number; changed: number }> {
  const rows = await deps.articles.storedBefore(SANITIZER_VERSION, deps.batchSize);
  if (!rows.length) return { read: 0, changed: 0 };
  const clean = rows.map((r) => ({
    id: r.id,
    title: plainText(r.title ? { kind: 'html', value: r.title } : null),
    author: plainText(r.author ? { kind: 'html', value: r.author } : null),
    summary: sanitizeContent(r.summary, r.feed_url),
    content: sanitizeContent(r.content, r.feed_url),
  }));
  return { read: rows.length, changed: await deps.articles.rewriteSanitized(SANITIZER_VERSION, clean) };
}

/** Runs until no article is below the current version, or until told to stop. Returns the rows cleaned. */
export async function sanitizeStoredArticles(deps: SanitizeStoredDeps): Promise<{ cleaned: number; finished: boolean }> {
  let cleaned = 0;
  while (deps.shouldContinue()) {
    const { read, changed } = await cleanBatch(deps);
    cleaned += changed;
    if (read < deps.batchSize) return { cleaned, finished: true };
  }
  return { cleaned, finished: false };
}
