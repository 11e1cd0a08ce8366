/**
 * The result pipeline end to end on the queues: an IP's first crawl taken as its baseline
 * (recorded, nothing counted), transitions over successive crawls (new_listing, sold, new_sold,
 * price_change, relisted), the hour's stats accumulating across crawls, the same result delivered
 * twice counted once, alerts at most once per IP and hour, the weight rule moving the interval,
 * and the next crawl scheduled at it (closed loop).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, resultOf, sold } from './helpers.js';
import type { CrawledItem } from '../../src/queues/payloads/crawl.js';

describe('result pipeline', () => {
  let t: TestPlatform;
  let q: CrawlQueues;
  const sql = async <T = any>(text: string, params: unknown[] = []) => (await t.platform.ctx.db.pool.query(text, params)).rows as T[];

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['pipeline', 'api'],
      env: { ALERT_OUTFLOW_MIN: '3', ALERT_OUTFLOW_SPIKE_FACTOR: '2', ALERT_LIQUIDITY_LEVEL: '0.5', ALERT_LIQUIDITY_MIN_INFLOW: '2' },
    });
    q = new CrawlQueues(t.redis.url);
  });
  afterAll(async () => {
    await q?.close();
    await t?.stop();
  });

  /** The crawler took the IP's current crawl and delivered these items. */
  async function crawl(ipId: number, items: CrawledItem[], crawledAt = new Date()) {
    const taskId = (await q.chain(ipId))!;
    await q.crawl.remove(taskId); // the crawler consumed it
    const job = await q.deliver(resultOf({ ipId, taskId }, items, crawledAt));
    await waitFor(async () => ['completed', 'failed'].includes(await q.results.getJobState(job.id!)), { message: `result ${job.id} not processed` });
    const done = (await q.results.getJob(job.id!))!;
    expect(done.failedReason).toBeUndefined();
    return { taskId, jobId: job.id!, outcome: done.returnvalue };
  }

  const stats = (ipId: number) =>
    sql(
      'SELECT inflow, outflow, liquidity_index::float AS liq, sample_count, price_sum::int AS price_sum, min_price, max_price FROM ip_stats_hourly WHERE ip_id = $1 ORDER BY hour_bucket',
      [ipId],
    );
  const snapshots = (ipId: number) =>
    sql<{ source_id: string; status: string; price: number; sold_at: Date | null }>(
      'SELECT source_id, status, price, sold_at FROM item_snapshots WHERE ip_id = $1 ORDER BY source_id',
      [ipId],
    );

  it("takes an IP's first crawl as its baseline: recorded, nothing counted, the weight kept, no alert", async () => {
    // A first crawl of a busy market: counted, it would be 600 new items, move the weight and
    // (outflow / inflow = 1 > 0.5 with inflow >= 2) fire high_liquidity.
    const ip = (await t.api.post('/api/ips', { name: 'Baseline', keyword: 'baseline' })).body;
    const items = [...Array.from({ length: 300 }, (_, i) => onSale(`on-${i}`, 100 + i)), ...Array.from({ length: 300 }, (_, i) => sold(`sold-${i}`, 200 + i))];
    const first = await crawl(ip.id, items);
    expect(first.outcome).toMatchObject({
      status: 'processed',
      baseline: true,
      items: 600,
      inflow: 0,
      outflow: 0,
      alerts: [],
      weight: 1,
      intervalSeconds: 7200,
    });
    expect(Object.values(first.outcome.transitions).every((n) => n === 0)).toBe(true);

    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(detail).toMatchObject({ weight: 1, intervalSeconds: 7200, hourlyStats: [], alerts: [] });
    expect(detail.lastCrawledAt).not.toBeNull();
    expect(await sql('SELECT rule FROM alerts WHERE ip_id = $1', [ip.id])).toEqual([]);
    expect((await t.api.get(`/api/ips/${ip.id}/items?limit=1`)).body.total).toBe(600); // the snapshots are there
    expect(await q.redis.hget(`wp:item:{${ip.id}}:on-0`, 'status')).toBe('on_sale'); // so are the states to compare with
    const board = (await t.api.get('/api/leaderboard?type=outflow&hours=24')).body.entries;
    expect(board.find((e: { ipId: number }) => e.ipId === ip.id)).toBeUndefined();

    // The next crawl is compared with the baseline: two items sold, one new listing.
    const second = await crawl(ip.id, [...items.slice(2, 300), sold('on-0', 100), sold('on-1', 101), onSale('fresh', 999), ...items.slice(300)]);
    expect(second.outcome).toMatchObject({ status: 'processed', inflow: 1, outflow: 2, transitions: { new_listing: 1, sold: 2, new_sold: 0, unchanged: 598 } });
    expect(second.outcome.baseline).toBeUndefined();
    expect(await stats(ip.id)).toEqual([{ inflow: 1, outflow: 2, liq: 2, sample_count: 2, price_sum: 201, min_price: 100, max_price: 101 }]);
  });

  it('applies every transition over successive crawls and accumulates the hour', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Transitions', keyword: 't' })).body;
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const at = (min: number) => new Date(hour.getTime() + min * 60_000);

    const first = await crawl(ip.id, [onSale('a', 100), onSale('b', 200), onSale('c', 300), sold('d', 400)], at(1));
    expect(first.outcome).toMatchObject({ status: 'processed', baseline: true, items: 4, inflow: 0, outflow: 0 });

    const second = await crawl(ip.id, [sold('a', 100), onSale('b', 250), onSale('c', 300), onSale('e', 500), sold('d', 400)], at(2));
    expect(second.outcome.transitions).toEqual({ new_listing: 1, new_sold: 0, sold: 1, price_change: 1, relisted: 0, unchanged: 2 });

    const third = await crawl(ip.id, [onSale('a', 90), onSale('a', 90)], at(3));
    expect(third.outcome.transitions).toMatchObject({ relisted: 1 });
    expect(third.outcome.items).toBe(1);

    expect(await stats(ip.id)).toEqual([{ inflow: 1, outflow: 1, liq: 1, sample_count: 1, price_sum: 100, min_price: 100, max_price: 100 }]);
    expect((await snapshots(ip.id)).map((s) => [s.source_id, s.status, s.price, s.sold_at !== null])).toEqual([
      ['a', 'on_sale', 90, false],
      ['b', 'on_sale', 250, false],
      ['c', 'on_sale', 300, false],
      ['d', 'sold', 400, true],
      ['e', 'on_sale', 500, false],
    ]);
    const state = await q.redis.hgetall(`wp:item:{${ip.id}}:a`);
    expect(state).toMatchObject({ status: 'on_sale', price: '90', first_seen: String(at(1).getTime()), last_seen: String(at(3).getTime()) });
    expect(await q.redis.ttl(`wp:item:{${ip.id}}:a`)).toBeGreaterThan(86_000);
    expect(await q.redis.ttl(`wp:item:{${ip.id}}:d`)).toBeGreaterThan(172_000);
  });

  it('counts a result delivered twice once, and still leaves exactly one next crawl', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Twice', keyword: 'twice' })).body;
    await crawl(ip.id, []); // the baseline
    const { jobId, outcome } = await crawl(ip.id, [onSale('x', 10), onSale('y', 20), sold('z', 30)]);
    expect(outcome.status).toBe('processed');
    const before = { stats: await stats(ip.id), snaps: await snapshots(ip.id), weight: (await sql('SELECT weight FROM ips WHERE id = $1', [ip.id]))[0] };
    const next = (await q.pendingFor(ip.id)).map((j) => j.id);
    expect(next).toEqual([outcome.nextTaskId]);

    // The console refuses to replay a finished link of a chain (409 finished_link); the result is
    // delivered a second time anyway (a redelivery: the completed job run again).
    const refused = await t.api.post(`/api/queues/crawl-result/jobs/${jobId}/retry`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('finished_link');
    await (await q.results.getJob(jobId))!.retry('completed');
    await waitFor(async () => (await q.results.getJob(jobId))?.returnvalue?.status === 'duplicate', { message: 'replayed result not processed' });

    expect(await stats(ip.id)).toEqual(before.stats);
    expect(await snapshots(ip.id)).toEqual(before.snaps);
    expect((await sql('SELECT weight FROM ips WHERE id = $1', [ip.id]))[0]).toEqual(before.weight);
    expect((await sql('SELECT count(*)::int AS n FROM processed_results WHERE ip_id = $1', [ip.id]))[0]).toEqual({ n: 2 }); // the baseline and this one
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual(next);
  });

  it('raises each alert at most once per IP and hour', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Alerting', keyword: 'alert' })).body;
    const now = Date.now();
    const hour = Math.floor(now / 3_600_000) * 3_600_000;
    // Two earlier hours with an average outflow of 1: the spike threshold is 2 x 1.
    await sql(`INSERT INTO ip_stats_hourly (ip_id, hour_bucket, inflow, outflow) VALUES ($1, $2, 10, 1), ($1, $3, 10, 1)`, [
      ip.id,
      new Date(hour - 3_600_000),
      new Date(hour - 7_200_000),
    ]);

    const inHour = new Date(hour + 60_000); // the same hour bucket however long the test takes
    await crawl(ip.id, [], new Date(hour + 30_000)); // the baseline
    await crawl(ip.id, [onSale('p1'), onSale('p2'), sold('s1'), sold('s2'), sold('s3')], inHour);
    const alerts = await sql<{ rule: string; value: number; threshold: number }>('SELECT rule, value, threshold FROM alerts WHERE ip_id = $1 ORDER BY rule', [
      ip.id,
    ]);
    expect(alerts).toEqual([
      { rule: 'high_liquidity', value: 1.5, threshold: 0.5 },
      { rule: 'outflow_spike', value: 3, threshold: 2 },
    ]);

    const again = await crawl(ip.id, [onSale('p1'), onSale('p2'), sold('s4'), sold('s5')], new Date(hour + 120_000));
    expect(again.outcome.alerts).toEqual([]);
    expect(await sql('SELECT rule FROM alerts WHERE ip_id = $1', [ip.id])).toHaveLength(2);
    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(detail.alerts.map((a: { rule: string }) => a.rule).sort()).toEqual(['high_liquidity', 'outflow_spike']);
    expect(detail.hourlyStats).toHaveLength(3);
  });

  it('moves the weight by what a crawl saw and schedules the next crawl at the new interval', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Busy', keyword: 'busy' })).body;
    await crawl(ip.id, [], new Date(Date.now() - 1000)); // the baseline
    const crawledAt = new Date();
    const items = Array.from({ length: 501 }, (_, i) => onSale(`busy-${i}`, 1000 + i));
    const { outcome } = await crawl(ip.id, items, crawledAt);
    expect(outcome).toMatchObject({ inflow: 501, weight: 1.25, intervalSeconds: 5760 });
    const pending = await q.pendingFor(ip.id);
    expect(pending.map((j) => j.id)).toEqual([outcome.nextTaskId]);
    const due = Date.parse((await t.api.get(`/api/ips/${ip.id}`)).body.currentCrawl.dueAt);
    expect(Math.abs(due - (crawledAt.getTime() + 5760_000))).toBeLessThan(2000);
    const row = (await sql('SELECT weight, interval_seconds, last_crawled_at, next_crawl_at FROM ips WHERE id = $1', [ip.id]))[0];
    expect(row).toMatchObject({ weight: 1.25, interval_seconds: 5760 });
    expect(row.last_crawled_at.getTime()).toBe(crawledAt.getTime());
    expect(row.next_crawl_at.getTime()).toBe(crawledAt.getTime() + 5760_000);

    // A quiet crawl: inflow < 250 and outflow < 15 slows it down again.
    const quiet = await crawl(ip.id, [onSale('busy-1', 1001)]);
    expect(quiet.outcome).toMatchObject({ weight: 1.15, intervalSeconds: 6261 });
  });

  it('skips the result of a deleted IP and schedules nothing for it', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Gone', keyword: 'gone' })).body;
    const taskId = (await q.chain(ip.id))!;
    await q.crawl.remove(taskId);
    await t.api.delete(`/api/ips/${ip.id}`);
    const job = await q.deliver(resultOf({ ipId: ip.id, taskId }, [onSale('g')]));
    await waitFor(async () => (await q.results.getJobState(job.id!)) === 'completed');
    expect((await q.results.getJob(job.id!))!.returnvalue).toMatchObject({ status: 'skipped' });
    expect(await q.pendingFor(ip.id)).toHaveLength(0);
    expect(await q.chain(ip.id)).toBeNull();
    expect(await snapshots(ip.id)).toEqual([]);
  });
});
