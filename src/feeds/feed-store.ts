/**
 * The feeds table: a user's subscriptions (the API's reads and writes) and each feed's refresh
 * bookkeeping (status, validators, error count, next refresh).
 *
 * The statements every refresh runs (load the feed, record the success) go straight to the pg
 * pool Prisma itself runs on: Prisma's client costs ~0.4-0.6 ms of CPU per query on top of pg's,
 * about 1.5 ms a refresh, which the feed benchmark's CPU-bound VM notices. They are named
 * (prepared once per connection, not parsed and planned again each time). The rarer statements
 * (the API's, a 304, a failure) stay with Prisma.
 *
 * A user has at most `maxPerUser` feeds: the count and the insert of a subscription run in one
 * transaction under an advisory lock of the user (feeds' own lock space; the users table belongs
 * to auth), so parallel subscriptions cannot pass the limit together.
 */
import type { Database, PrismaClient } from '../db/client.js';
import type { Feed } from '../generated/prisma/client.js';
import { stripControls } from './text-construct.js';

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

/** Postgres or Prisma: a foreign key the statement needed is missing (a user, a feed). */
function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string; meta?: { code?: string }; message?: string };
  return (
    e?.code === 'P2003' || e?.code === '23503' || e?.meta?.code === '23503' || /violates foreign key constraint|Foreign key constraint/i.test(e?.message ?? '')
  );
}

const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === 'P2002';

/**
 * First key of the advisory locks serialising one user's subscriptions (the second is the user
 * id): "FEED" in ASCII. The two-key form keeps them apart from the one-key locks of auth.
 */
const SUBSCRIBE_LOCK = 0x46454544;

export type NewFeed = Pick<Feed, 'url' | 'title' | 'refreshIntervalMinutes' | 'nextRefreshAt'>;

export type CreateOutcome = { kind: 'created'; feed: Feed } | { kind: 'exists' } | { kind: 'limit_reached' } | { kind: 'unknown_user' };

/** The fields the chain reconciliation computes a feed's due time from. */
export type FeedSchedule = Pick<Feed, 'id' | 'refreshIntervalMinutes' | 'errorCount' | 'lastFetchedAt' | 'nextRefreshAt'>;

/** The feeds columns as the Feed model names them. */
const FEED_COLUMNS = `id, user_id AS "userId", url, title, site_url AS "siteUrl", refresh_interval_minutes AS "refreshIntervalMinutes",
  status, last_fetched_at AS "lastFetchedAt", next_refresh_at AS "nextRefreshAt", last_error AS "lastError",
  error_count AS "errorCount", etag, last_modified AS "lastModified", article_count AS "articleCount",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export class FeedStore {
  private readonly prisma: PrismaClient;
  private readonly pool: Database['pool'];

  constructor(db: Pick<Database, 'prisma' | 'pool'>) {
    this.prisma = db.prisma;
    this.pool = db.pool;
  }

  // --- a refresh's reads and writes --------------------------------------------------------

  /** The feed row (by id), as a refresh reads it. */
  async find(feedId: number): Promise<Feed | null> {
    const { rows } = await this.pool.query<Feed>({ name: 'feeds-find', text: `SELECT ${FEED_COLUMNS} FROM feeds WHERE id = $1`, values: [feedId] });
    return rows[0] ?? null;
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

  /**
   * A refresh attempt that failed and will be retried: status retrying and the reason, so the
   * feed says so at once (its errorCount counts refreshes that failed for good, so it stays).
   */
  async recordRetry(feedId: number, lastError: string): Promise<void> {
    await this.prisma.feed.updateMany({ where: { id: feedId }, data: { status: 'retrying', lastError: lastError.slice(0, 2000) } });
  }

  /** A refresh that failed for good: status error, one more consecutive error, the reason. */
  async recordFailure(feedId: number, lastError: string): Promise<Feed> {
    return this.prisma.feed.update({
      where: { id: feedId },
      // Control characters go: PostgreSQL refuses U+0000 in text, and a refused record would leave the feed pending.
      data: { status: 'error', errorCount: { increment: 1 }, lastError: stripControls(lastError).slice(0, 2000) },
    });
  }

  /** The planned next refresh, for the API to show (the job's delay is the truth). */
  async setNextRefresh(feedId: number, at: Date): Promise<void> {
    await this.prisma.feed.updateMany({ where: { id: feedId }, data: { nextRefreshAt: at } });
  }

  // --- the API's reads and writes ----------------------------------------------------------

  /** The feed when `userId` owns it. */
  findOwned(userId: number, feedId: number): Promise<Feed | null> {
    return this.prisma.feed.findFirst({ where: { id: feedId, userId } });
  }

  listOwned(userId: number): Promise<Feed[]> {
    return this.prisma.feed.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  }

  /** Creates a subscription unless the user has `maxPerUser` feeds or the URL already, or does not exist. */
  async createWithinLimit(userId: number, feed: NewFeed, maxPerUser: number): Promise<CreateOutcome> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SUBSCRIBE_LOCK}::int, ${userId}::int)`;
        if ((await tx.feed.count({ where: { userId } })) >= maxPerUser) return { kind: 'limit_reached' as const };
        return { kind: 'created' as const, feed: await tx.feed.create({ data: { userId, ...feed } }) };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { kind: 'exists' };
      if (isForeignKeyViolation(err)) return { kind: 'unknown_user' };
      throw err;
    }
  }

  /** Changes the title and/or the interval. */
  update(feedId: number, changes: Partial<Pick<Feed, 'title' | 'refreshIntervalMinutes' | 'nextRefreshAt'>>): Promise<Feed> {
    return this.prisma.feed.update({ where: { id: feedId }, data: changes });
  }

  /** Deletes the feed (its articles go with it) when `userId` owns it. */
  async deleteOwned(userId: number, feedId: number): Promise<void> {
    await this.prisma.feed.deleteMany({ where: { id: feedId, userId } });
  }

  /** Deletes a feed (the undo of a subscription whose first refresh could not be scheduled). */
  async delete(feedId: number): Promise<void> {
    await this.prisma.feed.delete({ where: { id: feedId } });
  }

  // --- the chain reconciliation --------------------------------------------------------------

  /** Up to `limit` feeds with an id above `afterId`, in id order. */
  schedulesAfter(afterId: number, limit: number): Promise<FeedSchedule[]> {
    return this.prisma.feed.findMany({
      where: { id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: limit,
      select: { id: true, refreshIntervalMinutes: true, errorCount: true, lastFetchedAt: true, nextRefreshAt: true },
    });
  }

  /** Whether the feed row exists (a dead refresh's replay asks before it restarts the chain). */
  async exists(feedId: number): Promise<boolean> {
    return (await this.prisma.feed.findUnique({ where: { id: feedId }, select: { id: true } })) !== null;
  }

  /** Whether `feedId` is one of the user's feeds (the task view shows a user their own refreshes only). */
  async isOwnedBy(userId: number, feedId: number): Promise<boolean> {
    return (await this.prisma.feed.count({ where: { id: feedId, userId } })) > 0;
  }
}
