/**
 * Finding 10: no limit per user: one user could add any number of feeds; a 90,000-item feed stored
 * 90,000 rows in seconds and articles were kept forever. Now FEEDS_MAX_PER_USER bounds a user's
 * feeds (also under parallel subscriptions), FEED_MAX_ITEMS_PER_DOCUMENT the items stored per
 * refresh, and the feeds-trim-articles maintenance task trims each feed to its newest
 * ARTICLES_KEEP_PER_FEED articles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import { startFeedPlatform, waitForTask } from '../feeds/support.js';
import { createPlainUser } from '../support/accounts.js';
import type { TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('per-user limits', () => {
  let t: TestPlatform;
  let server: FeedServer;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({ roles: ['cluster', 'feeds', 'api'], env: { FEEDS_MAX_PER_USER: '3', ARTICLES_KEEP_PER_FEED: '30' } }));
  });
  afterAll(() => stop?.());

  it("refuses a user's feed past FEEDS_MAX_PER_USER (409 naming url), also when they arrive at once", async () => {
    const user = await createPlainUser(t, 'hoarder');
    for (let i = 0; i < 3; i++) expect((await user.post('/api/feeds', { url: `https://feeds.example.com/h${i}.xml` })).status).toBe(201);
    const over = await user.post('/api/feeds', { url: 'https://feeds.example.com/h3.xml' });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ code: 'feed_limit_reached', field: 'url' });

    const racer = await createPlainUser(t, 'racer');
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => racer.post('/api/feeds', { url: `https://feeds.example.com/r${i}.xml` })));
    expect(
      answers.filter((a) => a.status === 201),
      JSON.stringify(answers.map((a) => [a.status, a.body?.error?.code ?? a.body?.error?.message])),
    ).toHaveLength(3);
    expect(
      answers.filter((a) => a.status === 409),
      JSON.stringify(answers.map((a) => [a.status, a.body?.error])),
    ).toHaveLength(7);
    expect((await racer.get('/api/feeds')).body.feeds).toHaveLength(3);
  });

  it('stores at most ARTICLES_KEEP_PER_FEED (here below FEED_MAX_ITEMS_PER_DOCUMENT) items of a 5,000-item document', async () => {
    const feed = await t.api.post('/api/feeds', { url: server.url('/rss/big.xml?items=5000') });
    expect(feed.status).toBe(201);
    const task = await waitForTask(t.api, feed.body.taskId, 60_000);
    expect(task.state).toBe('completed');
    expect(task.result).toMatchObject({ outcome: 'refreshed', items: 5000, inserted: 30, truncatedItems: 4970 });
    expect(await t.platform.ctx.db.prisma.article.count({ where: { feedId: feed.body.id } })).toBe(30);
  });

  it('trims older articles to the newest ARTICLES_KEEP_PER_FEED with the feeds-trim-articles maintenance task', async () => {
    const { prisma, pool } = t.platform.ctx.db;
    const admin = await prisma.user.findUniqueOrThrow({ where: { username: 'admin' } });
    // A feed holding 90 articles from before the limit (no refresh of it runs: the URL is never fetched here).
    const feed = await prisma.feed.create({ data: { userId: admin.id, url: 'https://feeds.example.com/old.xml', articleCount: 90 } });
    await pool.query(
      `INSERT INTO articles (feed_id, user_id, url, title, published_at, updated_at)
       SELECT $1, $2, 'https://feeds.example.com/old/' || i, 'old ' || i, timestamptz '2024-01-01' + i * interval '1 hour', now() FROM generate_series(1, 90) i`,
      [feed.id, admin.id],
    );
    const queue = t.platform.ctx.queues.queue('maintenance');
    await waitFor(async () => (await queue.getJobSchedulers()).some((s) => s.key === 'feeds-trim-articles'), {
      timeoutMs: 20_000,
      message: "the trim task's scheduler",
    });
    // The scheduler's next run is an hour away: run its job now, as the scheduler would.
    const job = await queue.add('feeds-trim-articles', { task: 'feeds-trim-articles' });
    await waitFor(async () => (await job.getState()) === 'completed', { timeoutMs: 20_000, message: 'the trim task did not complete' });
    const kept = await prisma.article.findMany({ where: { feedId: feed.id }, orderBy: { publishedAt: 'asc' }, select: { title: true } });
    expect(kept.map((a) => a.title)).toEqual(Array.from({ length: 30 }, (_, i) => `old ${61 + i}`));
    expect((await prisma.feed.findUniqueOrThrow({ where: { id: feed.id } })).articleCount).toBe(30);
  });
});

describe('items per feed document with the default settings', () => {
  it('stores at most FEED_MAX_ITEMS_PER_DOCUMENT (1000) items of one document', async () => {
    const { t, server, stop } = await startFeedPlatform();
    try {
      const feed = await t.api.post('/api/feeds', { url: server.url('/rss/many.xml?items=5000') });
      const task = await waitForTask(t.api, feed.body.taskId, 60_000);
      expect(task.result).toMatchObject({ outcome: 'refreshed', items: 5000, inserted: 1000, truncatedItems: 4000 });
      expect(await t.platform.ctx.db.prisma.article.count({ where: { feedId: feed.body.id } })).toBe(1000);
    } finally {
      await stop();
    }
  });
});
