/**
 * The crawl routes of the REST contract: IPs are created, listed, read (through the caches),
 * changed and deleted, manual crawls reuse the pending crawl, items and leaderboards show what
 * the pipeline persisted, and bad input on every route is a 4xx naming the field with nothing
 * written or enqueued.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, resultOf, sold } from './helpers.js';

describe('crawl routes', () => {
  let t: TestPlatform;
  let q: CrawlQueues;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['pipeline', 'api'] });
    q = new CrawlQueues(t.redis.url);
  });
  afterAll(async () => {
    await q?.close();
    await t?.stop();
  });

  async function processResult(ipId: number, items: ReturnType<typeof onSale>[]) {
    const taskId = (await q.chain(ipId))!;
    const job = await q.deliver(resultOf({ ipId, taskId }, items));
    await waitFor(async () => (await q.results.getJobState(job.id!)) === 'completed', { message: `result ${job.id} not processed` });
    return (await q.results.getJob(job.id!))!.returnvalue;
  }

  it('creates an IP with its interval and schedules its first crawl at once', async () => {
    const res = await t.api.post('/api/ips', { name: 'Frieren', keyword: 'フリーレン', weight: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Frieren', keyword: 'フリーレン', weight: 2, active: true, intervalSeconds: 3600, lastCrawledAt: null });
    expect(Date.now() - Date.parse(res.body.nextCrawlAt)).toBeLessThan(60_000);
    expect(res.body.currentCrawl).toMatchObject({ state: 'waiting' });
    const pending = await q.pendingFor(res.body.id);
    expect(pending.map((j) => j.id)).toEqual([res.body.currentCrawl.taskId]);
    expect(pending[0]!.data).toMatchObject({ ipId: res.body.id, keyword: 'フリーレン', pagesOnSale: 5, pagesSold: 5 });

    const list = await t.api.get('/api/ips?active=true&limit=10');
    expect(list.status).toBe(200);
    expect(list.body.ips.map((i: { id: number }) => i.id)).toContain(res.body.id);
  });

  it('answers a create whose first crawl cannot be scheduled 503 with nothing left behind, so that the retry creates the IP once', async () => {
    const admin = new Redis(t.redis.url);
    try {
      // Redis holds every write: the first crawl's claim misses its deadline.
      await admin.call('CLIENT', 'PAUSE', '30000', 'WRITE');
      let refused;
      try {
        refused = await t.api.post('/api/ips', { name: 'Retried', keyword: 'retried' });
      } finally {
        await admin.call('CLIENT', 'UNPAUSE');
      }
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body.error.code).toBe('redis_unavailable');
      const named = async () => ((await t.api.get('/api/ips?limit=500')).body.ips as { id: number; name: string }[]).filter((ip) => ip.name === 'Retried');
      expect(await named()).toEqual([]);
      // The client's retry, once Redis is back.
      const created = await t.api.post('/api/ips', { name: 'Retried', keyword: 'retried' });
      expect(created.status).toBe(201);
      expect((await named()).map((ip) => ip.id)).toEqual([created.body.id]);
      expect((await q.pendingFor(created.body.id)).map((j) => j.id)).toEqual([created.body.currentCrawl.taskId]);
    } finally {
      admin.disconnect();
    }
  });

  it('refuses bad input on every crawl route with a 4xx naming the field, writing and enqueuing nothing', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Bad input target', keyword: 'x' })).body;
    const ipsBefore = (await t.api.get('/api/ips')).body.total;
    const countsBefore = await q.crawl.getJobCounts();
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/api/ips', { keyword: 'k' }, 400, 'name'],
      ['POST', '/api/ips', { name: '', keyword: 'k' }, 400, 'name'],
      ['POST', '/api/ips', { name: 'n', keyword: '   ' }, 400, 'keyword'],
      ['POST', '/api/ips', { name: 'n', keyword: 'k', weight: 0 }, 400, 'weight'],
      ['POST', '/api/ips', { name: 'n', keyword: 'k', weight: 'heavy' }, 400, 'weight'],
      ['POST', '/api/ips', { name: 'n', keyword: 'k', colour: 'red' }, 400, 'colour'],
      ['POST', '/api/ips', 'not json', 400, '(body)'],
      ['POST', '/api/ips', { name: 'x'.repeat(201), keyword: 'k' }, 400, 'name'],
      ['GET', '/api/ips?limit=0', undefined, 400, 'limit'],
      ['GET', '/api/ips?active=maybe', undefined, 400, 'active'],
      ['GET', '/api/ips/abc', undefined, 400, 'id'],
      ['GET', '/api/ips/-1', undefined, 400, 'id'],
      ['PATCH', `/api/ips/${ip.id}`, {}, 400, '(body)'],
      ['PATCH', `/api/ips/${ip.id}`, { weight: 1000 }, 400, 'weight'],
      ['PATCH', `/api/ips/${ip.id}`, { active: 'no' }, 400, 'active'],
      ['PATCH', `/api/ips/${ip.id}`, { interval: 5 }, 400, 'interval'],
      ['PATCH', '/api/ips/1.5', { name: 'n' }, 400, 'id'],
      ['DELETE', '/api/ips/zero', undefined, 400, 'id'],
      ['POST', '/api/ips/0/crawl', undefined, 400, 'id'],
      ['GET', `/api/ips/${ip.id}/items?status=listed`, undefined, 400, 'status'],
      ['GET', `/api/ips/${ip.id}/items?limit=501`, undefined, 400, 'limit'],
      ['GET', `/api/ips/${ip.id}/items?offset=-1`, undefined, 400, 'offset'],
      ['GET', '/api/leaderboard?type=hype', undefined, 400, 'type'],
      ['GET', '/api/leaderboard?hours=0', undefined, 400, 'hours'],
      ['GET', '/api/leaderboard?hours=169', undefined, 400, 'hours'],
      ['GET', '/api/leaderboard?limit=101', undefined, 400, 'limit'],
      ['GET', '/api/leaderboard?sort=asc', undefined, 400, 'sort'],
      ['GET', '/api/ips/999999', undefined, 404, 'id'],
      ['PATCH', '/api/ips/999999', { name: 'n' }, 404, 'id'],
      ['DELETE', '/api/ips/999999', undefined, 404, 'id'],
      ['POST', '/api/ips/999999/crawl', undefined, 404, 'id'],
      ['GET', '/api/ips/999999/items', undefined, 404, 'id'],
    ];
    for (const [method, path, body, status, field] of cases) {
      const res = await t.api.request(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.error.field, `${method} ${path} ${JSON.stringify(body)}`).toBe(field);
    }
    expect((await t.api.get('/api/ips')).body.total).toBe(ipsBefore);
    expect(await q.crawl.getJobCounts()).toEqual(countsBefore);
    expect((await t.api.get(`/api/ips/${ip.id}`)).body).toMatchObject({ name: 'Bad input target', weight: 1, active: true });
    for (const path of ['/api/ips', `/api/ips/${ip.id}`, `/api/ips/${ip.id}/items`, '/api/leaderboard']) {
      expect((await t.api.withToken(undefined).get(path)).status, path).toBe(401);
    }
  });

  it('reuses the pending crawl on a manual trigger: waiting stays, delayed moves forward, never a second one', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Manual', keyword: 'manual' })).body;
    const first = await t.api.post(`/api/ips/${ip.id}/crawl`);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ task_id: ip.currentCrawl.taskId, status: 'already_queued' });
    expect((await t.api.post(`/api/ips/${ip.id}/crawl`)).body.task_id).toBe(ip.currentCrawl.taskId);
    expect(await q.pendingFor(ip.id)).toHaveLength(1);

    // The crawl "runs" and its result is processed: the next crawl is delayed by the interval.
    await processResult(ip.id, [onSale('m1')]);
    const next = (await q.pendingFor(ip.id))[0]!;
    expect(await next.getState()).toBe('delayed');
    expect(next.id).not.toBe(ip.currentCrawl.taskId);

    const moved = await t.api.post(`/api/ips/${ip.id}/crawl`);
    expect(moved.body).toEqual({ task_id: next.id, status: 'moved_forward' });
    expect(await q.crawl.getJobState(next.id!)).toBe('waiting');
    expect((await t.api.post(`/api/ips/${ip.id}/crawl`)).body).toEqual({ task_id: next.id, status: 'already_queued' });
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([next.id]);
    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(detail.currentCrawl).toEqual({ taskId: next.id, state: 'waiting' });
  });

  it('shows persisted items, hourly stats and leaderboards, through caches the pipeline invalidates', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Cached', keyword: 'cached' })).body;
    await processResult(ip.id, []); // its first crawl: the baseline, nothing counted
    await processResult(ip.id, [onSale('a', 100), onSale('b', 200), sold('c', 300)]);

    const miss = await t.api.get(`/api/ips/${ip.id}`);
    expect(miss.headers.get('x-cache')).toBe('miss');
    expect(miss.body.hourlyStats).toHaveLength(1);
    expect(miss.body.hourlyStats[0]).toMatchObject({ inflow: 2, outflow: 1, liquidityIndex: 0.5, avgPrice: 300, minPrice: 300, maxPrice: 300, sampleCount: 1 });
    expect(miss.body.lastCrawledAt).not.toBeNull();
    expect(miss.body.currentCrawl.state).toBe('delayed');
    expect(Date.parse(miss.body.currentCrawl.dueAt) - Date.now()).toBeGreaterThan(3000_000);
    await waitFor(async () => (await t.api.get(`/api/ips/${ip.id}`)).headers.get('x-cache') === 'hit', { message: 'detail never cached' });

    const items = await t.api.get(`/api/ips/${ip.id}/items?status=on_sale`);
    expect(items.body.total).toBe(2);
    expect(items.body.items.map((i: { sourceId: string }) => i.sourceId).sort()).toEqual(['a', 'b']);
    expect((await t.api.get(`/api/ips/${ip.id}/items`)).body.total).toBe(3);
    expect((await t.api.get(`/api/ips/${ip.id}/items?status=sold`)).body.items[0]).toMatchObject({ sourceId: 'c', status: 'sold', price: 300 });

    const board = await t.api.get('/api/leaderboard?type=outflow&hours=24');
    expect(board.status).toBe(200);
    const entry = board.body.entries.find((e: { ipId: number }) => e.ipId === ip.id);
    expect(entry).toMatchObject({ name: 'Cached', inflow: 2, outflow: 1, liquidityIndex: 0.5 });
    await waitFor(async () => (await t.api.get('/api/leaderboard?type=outflow&hours=24')).headers.get('x-cache') === 'hit', {
      message: 'leaderboard never cached',
    });

    // A second crawl in the same hour: b sells, a new listing appears. Both caches are invalidated.
    await processResult(ip.id, [onSale('a', 100), sold('b', 250), onSale('d', 400)]);
    const fresh = await t.api.get(`/api/ips/${ip.id}`);
    expect(fresh.headers.get('x-cache')).toBe('miss');
    expect(fresh.body.hourlyStats[0]).toMatchObject({ inflow: 3, outflow: 2, sampleCount: 2, minPrice: 250, maxPrice: 300, avgPrice: 275 });
    const board2 = await t.api.get('/api/leaderboard?type=outflow&hours=24');
    expect(board2.headers.get('x-cache')).toBe('miss');
    expect(board2.body.entries.find((e: { ipId: number }) => e.ipId === ip.id)).toMatchObject({ inflow: 3, outflow: 2 });
    expect((await t.api.get('/api/leaderboard?type=liquidity&limit=1')).body.entries).toHaveLength(1);
  });

  it('stops crawling an inactive IP, restarts on activation, and a deleted IP leaves no crawl behind', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Toggle', keyword: 'toggle' })).body;
    const off = await t.api.patch(`/api/ips/${ip.id}`, { active: false });
    expect(off.body).toMatchObject({ active: false, nextCrawlAt: null, currentCrawl: null });
    expect(await q.pendingFor(ip.id)).toHaveLength(0);
    expect(await q.chain(ip.id)).toBeNull();
    const refused = await t.api.post(`/api/ips/${ip.id}/crawl`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'ip_inactive', field: 'id' });

    const on = await t.api.patch(`/api/ips/${ip.id}`, { active: true, weight: 4, keyword: 'toggled' });
    expect(on.body).toMatchObject({ active: true, weight: 4, intervalSeconds: 3600, keyword: 'toggled' });
    const pending = await q.pendingFor(ip.id);
    expect(pending).toHaveLength(1);
    expect(pending[0]!.data.keyword).toBe('toggled');

    expect((await t.api.delete(`/api/ips/${ip.id}`)).status).toBe(204);
    expect(await q.pendingFor(ip.id)).toHaveLength(0);
    expect(await q.chain(ip.id)).toBeNull();
    expect((await t.api.get(`/api/ips/${ip.id}`)).status).toBe(404);
  });

  it('moves the pending crawl when a weight change changes the interval', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Reweighed', keyword: 'w' })).body;
    await processResult(ip.id, []);
    const before = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(before.intervalSeconds).toBe(7200);
    const patched = await t.api.patch(`/api/ips/${ip.id}`, { weight: 2 });
    expect(patched.body.intervalSeconds).toBe(3600);
    const due = Date.parse(patched.body.currentCrawl.dueAt);
    const expected = Date.parse(before.lastCrawledAt) + 3600_000;
    expect(Math.abs(due - expected)).toBeLessThan(5000);
    expect(await q.pendingFor(ip.id)).toHaveLength(1);
  });
});
