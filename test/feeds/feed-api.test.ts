/**
 * The feed routes' contract: bad input on every route is a 4xx naming the field, and nothing is
 * written or enqueued; a URL is one subscription per user (409); feeds belong to their user
 * (another user's feed is a 404 everywhere); every route needs a token. No worker runs here, so
 * the queue's contents only change through the API.
 */
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('feed API', () => {
  let t: TestPlatform;
  let other: ApiClient;
  let feedId: number;
  const url = 'http://127.0.0.1:9/rss/contract.xml';

  async function snapshot() {
    const q = t.platform.ctx.queues.queue('feedRefresh');
    return {
      feeds: await t.platform.ctx.db.prisma.feed.findMany({ orderBy: { id: 'asc' } }),
      jobs: await q.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'),
    };
  }

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    await t.platform.ctx.db.prisma.user.create({ data: { username: 'bob', passwordHash: await bcrypt.hash('bob-password', 4) } });
    other = new ApiClient(t.api.baseUrl);
    await other.login('bob', 'bob-password');
    const res = await t.api.post('/api/feeds', { url, title: 'Contract', refreshIntervalMinutes: 15 });
    expect(res.status).toBe(201);
    feedId = res.body.id;
  });
  afterAll(() => t?.stop());

  it('subscribes: 201 with the feed, its nextRefreshAt and the task of its first refresh', async () => {
    const res = await t.api.get(`/api/feeds/${feedId}`);
    expect(res.body).toMatchObject({
      id: feedId,
      url,
      title: 'Contract',
      refreshIntervalMinutes: 15,
      status: 'pending',
      errorCount: 0,
      lastError: null,
      lastFetchedAt: null,
    });
    expect(Date.parse(res.body.nextRefreshAt)).toBeLessThanOrEqual(Date.now());
    const list = await t.api.get('/api/feeds');
    expect(list.body.feeds.map((f: { id: number }) => f.id)).toEqual([feedId]);
    const jobs = await t.platform.ctx.queues.queue('feedRefresh').getJobs(['prioritized', 'waiting']);
    expect(jobs.map((j) => j.data)).toEqual([{ feedId, trigger: 'initial', domain: new URL(url).hostname }]);
  });

  it('answers 409 when this user already has the URL (also spelled differently), and lets another user subscribe it', async () => {
    const before = await snapshot();
    for (const same of [url, 'HTTP://127.0.0.1:9/rss/contract.xml', `  ${url} `]) {
      const res = await t.api.post('/api/feeds', { url: same });
      expect(res.status, same).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'feed_exists', field: 'url' });
    }
    expect(await snapshot()).toEqual(before);
    const theirs = await other.post('/api/feeds', { url });
    expect(theirs.status).toBe(201);
    expect((await other.get('/api/feeds')).body.feeds).toHaveLength(1);
    expect((await t.api.get('/api/feeds')).body.feeds).toHaveLength(1);
  });

  const bad: [string, string, string, unknown, number, string][] = [
    ['POST', '/api/feeds', 'no url', {}, 400, 'url'],
    ['POST', '/api/feeds', 'url not a URL', { url: 'not a url' }, 400, 'url'],
    ['POST', '/api/feeds', 'url not http(s)', { url: 'ftp://example.com/feed' }, 400, 'url'],
    ['POST', '/api/feeds', 'url a number', { url: 42 }, 400, 'url'],
    ['POST', '/api/feeds', 'url too long', { url: `http://example.com/${'a'.repeat(3000)}` }, 400, 'url'],
    ['POST', '/api/feeds', 'empty title', { url: 'http://example.com/a', title: '  ' }, 400, 'title'],
    ['POST', '/api/feeds', 'interval 0', { url: 'http://example.com/a', refreshIntervalMinutes: 0 }, 400, 'refreshIntervalMinutes'],
    ['POST', '/api/feeds', 'interval 1441', { url: 'http://example.com/a', refreshIntervalMinutes: 1441 }, 400, 'refreshIntervalMinutes'],
    ['POST', '/api/feeds', 'interval 1.5', { url: 'http://example.com/a', refreshIntervalMinutes: 1.5 }, 400, 'refreshIntervalMinutes'],
    ['POST', '/api/feeds', 'interval a string', { url: 'http://example.com/a', refreshIntervalMinutes: '30' }, 400, 'refreshIntervalMinutes'],
    ['POST', '/api/feeds', 'an unknown field', { url: 'http://example.com/a', colour: 'red' }, 400, 'colour'],
    ['POST', '/api/feeds', 'malformed JSON', '{"url": ', 400, '(body)'],
    ['POST', '/api/feeds', 'a JSON array', [], 400, '(body)'],
    ['GET', '/api/feeds/abc', 'a non-numeric id', undefined, 400, 'id'],
    ['GET', '/api/feeds/0', 'id 0', undefined, 400, 'id'],
    ['GET', '/api/feeds/999999', 'an unknown id', undefined, 404, 'id'],
    ['PATCH', '/api/feeds/abc', 'a non-numeric id', { title: 'x' }, 400, 'id'],
    ['PATCH', '/api/feeds/FEED', 'an empty change', {}, 400, '(body)'],
    ['PATCH', '/api/feeds/FEED', 'interval 0', { refreshIntervalMinutes: 0 }, 400, 'refreshIntervalMinutes'],
    ['PATCH', '/api/feeds/FEED', 'interval null', { refreshIntervalMinutes: null }, 400, 'refreshIntervalMinutes'],
    ['PATCH', '/api/feeds/FEED', 'an empty title', { title: '' }, 400, 'title'],
    ['PATCH', '/api/feeds/FEED', 'a url change', { url: 'http://example.com/b' }, 400, 'url'],
    ['PATCH', '/api/feeds/999999', 'an unknown id', { title: 'x' }, 404, 'id'],
    ['DELETE', '/api/feeds/-3', 'a negative id', undefined, 400, 'id'],
    ['DELETE', '/api/feeds/999999', 'an unknown id', undefined, 404, 'id'],
    ['GET', '/api/feeds/FEED/articles?limit=0', 'limit 0', undefined, 400, 'limit'],
    ['GET', '/api/feeds/FEED/articles?limit=501', 'limit 501', undefined, 400, 'limit'],
    ['GET', '/api/feeds/FEED/articles?limit=ten', 'limit not a number', undefined, 400, 'limit'],
    ['GET', '/api/feeds/x/articles', 'a non-numeric id', undefined, 400, 'id'],
    ['GET', '/api/feeds/999999/articles', 'an unknown id', undefined, 404, 'id'],
    ['POST', '/api/queue/schedule-feed', 'no feed_id', { force_immediate: true }, 400, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'feed_id not a number', { feed_id: 'abc' }, 400, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'feed_id 0', { feed_id: 0 }, 400, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'feed_id 1.5', { feed_id: 1.5 }, 400, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'feed_id true', { feed_id: true }, 400, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'force_immediate not a boolean', { feed_id: 'FEED', force_immediate: 'yes' }, 400, 'force_immediate'],
    ['POST', '/api/queue/schedule-feed', 'an unknown field', { feed_id: 'FEED', priority: 'high' }, 400, 'priority'],
    ['POST', '/api/queue/schedule-feed', 'an unknown feed', { feed_id: 999999 }, 404, 'feed_id'],
    ['POST', '/api/queue/schedule-feed', 'no body', undefined, 400, '(body)'],
  ];

  it.each(bad)('%s %s with %s → %i naming %s; nothing written or enqueued', async (method, path, _what, body, status, field) => {
    const before = await snapshot();
    const p = path.replace('FEED', String(feedId));
    const b = body && typeof body === 'object' && !Array.isArray(body) ? JSON.parse(JSON.stringify(body).replace('"FEED"', String(feedId))) : body;
    const res = await t.api.request(method, p, b);
    expect(res.status).toBe(status);
    expect(res.body.error.field).toBe(field);
    expect(typeof res.body.error.code).toBe('string');
    expect(typeof res.body.error.message).toBe('string');
    expect(await snapshot()).toEqual(before);
  });

  it("treats another user's feed as missing on every route, and changes nothing", async () => {
    const before = await snapshot();
    const replies = await Promise.all([
      other.get(`/api/feeds/${feedId}`),
      other.patch(`/api/feeds/${feedId}`, { title: 'mine now' }),
      other.delete(`/api/feeds/${feedId}`),
      other.get(`/api/feeds/${feedId}/articles`),
      other.post('/api/queue/schedule-feed', { feed_id: feedId, force_immediate: true }),
    ]);
    expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect(replies.map((r) => r.body.error.code)).toEqual(Array(5).fill('feed_not_found'));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses every feed route without a token', async () => {
    const anon = t.api.withToken(undefined);
    const replies = await Promise.all([
      anon.post('/api/feeds', { url: 'http://example.com/x' }),
      anon.get('/api/feeds'),
      anon.get(`/api/feeds/${feedId}`),
      anon.patch(`/api/feeds/${feedId}`, { title: 'x' }),
      anon.delete(`/api/feeds/${feedId}`),
      anon.get(`/api/feeds/${feedId}/articles`),
      anon.post('/api/queue/schedule-feed', { feed_id: feedId }),
    ]);
    expect(replies.map((r) => r.status)).toEqual(Array(7).fill(401));
  });

  it('documents the feed routes in the OpenAPI document', async () => {
    const doc = (await t.api.get('/api/openapi.json')).body;
    for (const p of ['/api/feeds', '/api/feeds/{id}', '/api/feeds/{id}/articles', '/api/queue/schedule-feed']) expect(doc.paths[p], p).toBeDefined();
    expect(Object.keys(doc.paths['/api/feeds/{id}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
  });
});
