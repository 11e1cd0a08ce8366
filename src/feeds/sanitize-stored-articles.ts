/**
 * The job that cleans articles stored before the current sanitizer: every row whose
 * `sanitizer_version` is below SANITIZER_VERSION (all rows written before sanitizing existed
 * have 0) gets its title and author turned into plain text and its summary and content
 * sanitized, as a refresh would store them today, and is marked with the current version.
 *
 * Run by the feeds role's leader at start (role.ts), in batches of FEED_SANITIZE_BATCH_SIZE rows
 * taken in (sanitizer_version, id) order, which an index serves: with nothing left to clean the
 * job costs one index probe. Idempotent and resumable: a batch is one UPDATE that only touches
 * rows still below the version, so a crash, a lost leadership or a second run repeats nothing
 * and skips rows a refresh rewrote meanwhile (a refresh writes the current version).
 *
 * The base for relative URLs in stored content is the feed's URL: the xml:base and
 * Content-Location a refresh would use are not stored.
 */
import type pg from 'pg';
import { SANITIZER_VERSION, sanitizeContent } from './sanitize-content.js';
import { plainText } from './text-construct.js';

export interface SanitizeStoredDeps {
  pool: Pick<pg.Pool, 'query'>;
  batchSize: number;
  /** Checked before every batch: false stops the job (leadership lost, shutdown). */
  shouldContinue: () => boolean;
}

interface StoredRow {
  id: string;
  title: string | null;
  author: string | null;
  summary: string | null;
  content: string | null;
  feed_url: string;
}

/** Cleans one batch; returns how many rows it read (fewer than the batch size: done). */
async function cleanBatch(deps: SanitizeStoredDeps): Promise<{ read: number; changed: number }> {
  const { rows } = await deps.pool.query<StoredRow>({
    name: 'feeds-sanitize-read',
    text: `SELECT a.id::text AS id, a.title, a.author, a.summary, a.content, f.url AS feed_url
      FROM articles a JOIN feeds f ON f.id = a.feed_id
      WHERE a.sanitizer_version < $1 ORDER BY a.sanitizer_version, a.id LIMIT $2`,
    values: [SANITIZER_VERSION, deps.batchSize],
  });
  if (!rows.length) return { read: 0, changed: 0 };
  const clean = rows.map((r) => ({
    id: r.id,
    title: plainText(r.title ? { kind: 'html', value: r.title } : null),
    author: plainText(r.author ? { kind: 'html', value: r.author } : null),
    summary: sanitizeContent(r.summary, r.feed_url),
    content: sanitizeContent(r.content, r.feed_url),
  }));
  const result = await deps.pool.query({
    name: 'feeds-sanitize-write',
    text: `UPDATE articles AS a SET title = u.title, author = u.author, summary = u.summary, content = u.content,
        sanitizer_version = $1,
        updated_at = CASE WHEN (a.title, a.author, a.summary, a.content) IS DISTINCT FROM (u.title, u.author, u.summary, u.content)
          THEN now() ELSE a.updated_at END
      FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, title, author, summary, content)
      WHERE a.id = u.id AND a.sanitizer_version < $1`,
    values: [SANITIZER_VERSION, clean.map((c) => c.id), clean.map((c) => c.title), clean.map((c) => c.author), clean.map((c) => c.summary), clean.map((c) => c.content)],
  });
  return { read: rows.length, changed: result.rowCount ?? 0 };
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
