/**
 * The refresh job against a local fixture server (no internet), through the REST API and one
 * in-process feeds worker: every supported format, a 5,000-item feed, re-processing without
 * duplicates, progress and log lines of a refresh and of a 304, each failure ending as the
 * design says (refresh-failure.ts), a failure on our side (the database refusing the articles)
 * recorded with a next refresh like any other, and the worker still healthy afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import type { TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { INTERNAL_ERROR } from '../../src/feeds/refresh-feed.js';
import { pendingJobsOfFeed, startFeedPlatform, waitForTask } from './support.js';

describe('feed refresh', () => {
  let t: TestPlatform;
  let server: FeedServer;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({
      env: {
        FEED_FETCH_TIMEOUT_MS: '1500',
        FEED_ATTEMPTS: '2',
        FEED_RETRY_DELAY_MS: '200',
        // The 5,000-item feed below is stored whole (the limits themselves: test/security/per-user-limits.test.ts).
        FEED_MAX_ITEMS_PER_DOCUMENT: '5000',
        ARTICLES_KEEP_PER_FEED: '5000',
      },
    }));
  });
  afterAll(() => stop?.());

  async function subscribe(path: string, extra: Record<string, unknown> = {}) {
    const res = await t.api.post('/api/feeds', { url: server.url(path), ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: number; taskId: string; url: string };
  }

  const feed = async (id: number) => (await t.api.get(`/api/feeds/${id}`)).body;
  const articles = async (id: number, limit = 500) => (await t.api.get(`/api/feeds/${id}/articles?limit=${limit}`)).body.articles as any[];

  it.each([
    ['RSS 2.0', '/rss/blog.xml', 'Feed blog', 10, 'blog item 9'],
    ['RSS 0.91', '/rss091.xml', 'RSS 0.91', 2, 'Old one'],
    ['RSS 1.0 (RDF)', '/rdf.xml', 'RSS 1.0', 1, 'RDF one'],
    ['Atom 1.0', '/atom.xml', 'Atom 1.0', 2, 'Atom two'],
    ['Atom 0.3', '/atom03.xml', 'Atom 0.3', 1, 'Old atom'],
    ['JSON Feed 1.1', '/feed.json', 'JSON Feed 1.1', 3, 'JSON one'],
    ['JSON Feed 1.0', '/feed10.json', 'JSON Feed 1.0', 1, 'JSON 1.0 one'],
  ])('refreshes %s: articles stored, feed ok, result readable via /api/tasks', async (_name, path, title, count, someTitle) => {
    const f = await subscribe(path);
    const task = await waitForTask(t.api, f.taskId);
    expect(task.state).toBe('completed');
    expect(task.queue).toBe('feed-refresh');
    expect(task.result).toMatchObject({ feedId: f.id, trigger: 'initial', outcome: 'refreshed', httpStatus: 200, items: count, inserted: count });
    const view = await feed(f.id);
    expect(view).toMatchObject({ status: 'ok', title, errorCount: 0, lastError: null, articleCount: count });
    expect(Date.parse(view.lastFetchedAt)).toBeGreaterThan(Date.now() - 60_000);
    const list = await articles(f.id);
    expect(list).toHaveLength(count);
    expect(list.map((a) => a.title)).toContain(someTitle);
    expect(list.every((a) => a.url.startsWith('http://127.0.0.1:'))).toBe(true);
  });

  it('sends a real User-Agent and follows a redirect', async () => {
    const f = await subscribe('/redirect/moved.xml');
    expect((await waitForTask(t.api, f.taskId)).result).toMatchObject({ outcome: 'refreshed', items: 10 });
    const req = server.requests.find((r) => r.path === '/rss/moved.xml')!;
    expect(req.headers['user-agent']).toMatch(/^Mozilla\/5\.0 \(compatible; worker-platform-feeds/);
  });

  it('sends credentials from the feed URL as Basic auth', async () => {
    const res = await t.api.post('/api/feeds', { url: server.url('/private.xml').replace('http://', 'http://reader:secret@') });
    expect(res.status).toBe(201);
    expect((await waitForTask(t.api, res.body.taskId)).result).toMatchObject({ outcome: 'refreshed', items: 2 });
  });

  it('stores a 5,000-item feed, and re-processing the same content adds no duplicate', async () => {
    const f = await subscribe('/rss/big.xml?items=5000');
    const first = await waitForTask(t.api, f.taskId, 60_000);
    expect(first.result).toMatchObject({ outcome: 'refreshed', items: 5000, inserted: 5000 });
    expect((await feed(f.id)).articleCount).toBe(5000);

    const again = await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: true });
    expect(again.status).toBe(202);
    expect(again.body.status).toBe('queued');
    const second = await waitForTask(t.api, again.body.task_id, 60_000);
    expect(second.result).toMatchObject({ trigger: 'manual', outcome: 'refreshed', items: 5000, inserted: 0, updated: 0, unchanged: 5000 });
    const rows = await t.platform.ctx.db.prisma.article.count({ where: { feedId: f.id } });
    expect(rows).toBe(5000);
    expect((await feed(f.id)).articleCount).toBe(5000);
  });

  it('answers a conditional GET with 304: lastFetchedAt moves, nothing else changes', async () => {
    const f = await subscribe('/etag/cond.xml');
    await waitForTask(t.api, f.taskId);
    const before = await feed(f.id);
    expect(before).toMatchObject({ status: 'ok', etag: '"cond-v1"', lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT', articleCount: 5 });
    const articlesBefore = await articles(f.id);

    const again = await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: true });
    const task = await waitForTask(t.api, again.body.task_id);
    expect(task.result).toMatchObject({ outcome: 'not_modified', httpStatus: 304 });
    const conditional = server.requests.filter((r) => r.path === '/etag/cond.xml').at(-1)!;
    expect(conditional.headers['if-none-match']).toBe('"cond-v1"');
    expect(conditional.headers['if-modified-since']).toBe('Mon, 01 Jan 2024 00:00:00 GMT');

    const after = await feed(f.id);
    expect(Date.parse(after.lastFetchedAt)).toBeGreaterThan(Date.parse(before.lastFetchedAt));
    expect(after).toMatchObject({ status: 'ok', etag: before.etag, lastModified: before.lastModified, articleCount: 5, title: before.title });
    expect(await articles(f.id)).toEqual(articlesBefore);
  });

  it('reports its progress and log lines: status, bytes, items new and updated, 304, next refresh', async () => {
    const f = await subscribe('/etag/progress.xml');
    const first = await waitForTask(t.api, f.taskId);
    expect(first.progress).toMatchObject({ step: 'stored', httpStatus: 200, items: 5, inserted: 5, updated: 0, notModified: false });
    expect(first.progress.bytes).toBeGreaterThan(500);
    expect(first.progress.nextRefreshAt).toBe(first.result.nextRefreshAt);
    expect(first.logs).toEqual([
      `answered 200, ${first.progress.bytes} bytes`,
      `rss: 5 items, 5 new, 0 updated, 0 unchanged; next refresh at ${first.result.nextRefreshAt}`,
    ]);
    expect(first.logCount).toBe(2);

    const again = await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: true });
    const second = await waitForTask(t.api, again.body.task_id);
    expect(second.progress).toEqual({ step: 'not_modified', httpStatus: 304, notModified: true, nextRefreshAt: second.result.nextRefreshAt });
    expect(second.logs).toEqual([`304 not modified; next refresh at ${second.result.nextRefreshAt}`]);
  });

  it('records a failure on our side like any other: the feed shows an error and its next refresh, one chain pending', async () => {
    // The database refuses this feed's articles: not the feed's fault, and not an outage either.
    const pool = t.platform.ctx.db.pool;
    await pool.query(`CREATE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by a test trigger'; END $$`);
    await pool.query(
      `CREATE TRIGGER test_refuse_poison BEFORE INSERT ON articles FOR EACH ROW WHEN (NEW.url LIKE '%/poison/%') EXECUTE FUNCTION test_refuse_poison()`,
    );
    try {
      const f = await subscribe('/rss/poison.xml');
      const task = await waitForTask(t.api, f.taskId);
      expect(task.state).toBe('failed');
      expect(task.attemptsMade).toBe(2); // retried like any failure, then failed for good
      expect(task.failedReason).toContain('refused by a test trigger'); // the operator's view
      const view = await feed(f.id);
      // The user's view: an error that says where it failed, not how, and when the next try comes.
      expect(view).toMatchObject({ status: 'error', errorCount: 1, lastError: INTERNAL_ERROR, articleCount: 0 });
      expect(Date.parse(view.nextRefreshAt) - Date.now()).toBeGreaterThan(55 * 60_000);
      const queue = t.platform.ctx.queues.queue('feedRefresh');
      const pending = await waitFor(
        async () => {
          const jobs = await pendingJobsOfFeed(queue, f.id);
          return jobs.length ? jobs : undefined;
        },
        { message: 'no next refresh queued' },
      );
      expect(pending.map((j) => j.data.trigger)).toEqual(['periodic']);
      expect(Math.abs(pending[0]!.timestamp + pending[0]!.delay - Date.parse(view.nextRefreshAt))).toBeLessThan(5000);
      expect(task.logs?.at(-1)).toBe(`failed for good: ${INTERNAL_ERROR}; next refresh at ${view.nextRefreshAt}`);
    } finally {
      await pool.query('DROP TRIGGER test_refuse_poison ON articles');
      await pool.query('DROP FUNCTION test_refuse_poison()');
    }
  });

  it('honours Retry-After on 429: the retry waits for it, the feed saying so with its last error, then succeeds', async () => {
    const f = await subscribe('/rate-limited/busy.xml?times=1&after=2');
    // While the retry waits (at least the 2 s of Retry-After), the feed says it is retrying, and why.
    const waiting = await waitFor(async () => ((await feed(f.id)).status === 'retrying' ? feed(f.id) : undefined), {
      message: 'the feed never showed its retry',
    });
    expect(waiting).toMatchObject({ status: 'retrying', errorCount: 0 });
    expect(waiting.lastError).toMatch(/^rate_limited: /);
    const task = await waitForTask(t.api, f.taskId);
    expect(task.state).toBe('completed');
    expect(task.attemptsMade).toBe(2); // the 429, then the success
    const hits = server.requests.filter((r) => r.path === '/rate-limited/busy.xml');
    expect(hits).toHaveLength(2);
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(await feed(f.id)).toMatchObject({ status: 'ok', errorCount: 0, lastError: null, articleCount: 3 });
  });

  it.each([
    ['malformed XML', '/malformed.xml', 'not_a_feed', /malformed/],
    ['an HTML page instead of a feed', '/page.html', 'not_a_feed', /HTML page/],
    ['a redirect loop', '/loop/a', 'too_many_redirects', /redirect loop/],
    ['a 10 MB+ body', '/huge.xml', 'too_large', /exceeds the limit of 10485760 bytes/],
    ['404', '/status/404', 'http_4xx', /HTTP 404/],
    ['410', '/status/410', 'http_4xx', /HTTP 410/],
  ])('fails %s at once, without retries, and backs the feed off', async (_name, path, failure, message) => {
    const f = await subscribe(path);
    const task = await waitForTask(t.api, f.taskId);
    expect(task.state).toBe('failed');
    expect(task.attemptsMade).toBe(1);
    expect(task.failedReason).toMatch(new RegExp(`^${failure}: `));
    const view = await feed(f.id);
    expect(view).toMatchObject({ status: 'error', errorCount: 1, articleCount: 0 });
    expect(view.lastError).toMatch(message);
    // The next periodic refresh backs off: 2 × the 30-minute interval.
    expect(Date.parse(view.nextRefreshAt) - Date.now()).toBeGreaterThan(55 * 60_000);
    expect(await articles(f.id)).toHaveLength(0);
    if (path === '/loop/a') expect(server.requests.filter((r) => r.path.startsWith('/loop/')).length).toBeLessThanOrEqual(6);
  });

  it.each([
    // Before an answer every failure reads the same (no port mapping through lastError).
    ['a server that never answers', '/hang.xml', 'connection_failed'],
    ['a body that stops coming', '/stall.xml', 'timeout'],
    ['a 500', '/status/500', 'http_5xx'],
  ])('retries %s with backoff, then records the failure', async (_name, path, failure) => {
    const f = await subscribe(path);
    const task = await waitForTask(t.api, f.taskId);
    expect(task.state).toBe('failed');
    expect(task.attemptsMade).toBe(2);
    expect(task.failedReason).toMatch(new RegExp(`^${failure}: `));
    expect(server.requests.filter((r) => r.path === path)).toHaveLength(2);
    expect(await feed(f.id)).toMatchObject({ status: 'error', errorCount: 1 });
  });

  it('leaves the worker healthy: no job stuck, no lock left, a new feed refreshes', async () => {
    const queue = t.platform.ctx.queues.queue('feedRefresh');
    await waitFor(async () => (await queue.getActiveCount()) === 0, { message: 'jobs still active' });
    const locks = await t.platform.ctx.redis.keys(`${t.platform.ctx.keys.prefix}:tasklock:feed:*`);
    expect(locks).toEqual([]);
    const f = await subscribe('/rss/after.xml');
    expect((await waitForTask(t.api, f.taskId)).result).toMatchObject({ outcome: 'refreshed', items: 10 });
  });
});
