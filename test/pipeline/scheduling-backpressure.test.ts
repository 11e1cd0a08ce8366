/**
 * Backpressure: with SCHEDULER_BACKPRESSURE_THRESHOLD=5, no more than 5 crawl jobs wait at any
 * sampled moment while 40 crawls fall due at once; the rest are held back, not dropped: every
 * IP is crawled once and gets its next crawl.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, startStandInCrawler } from './helpers.js';

describe('scheduler backpressure', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let t: TestPlatform;
  let q: CrawlQueues;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    // All 40 fall due at the same moment, 6 s from now: the leader's backpressure loop runs by then,
    // even on a loaded machine (IPs due at once at start-up would be promoted by BullMQ before the
    // loop's first round could hold them back).
    await db.query(
      `INSERT INTO ips (name, keyword, last_crawled_at, updated_at)
       SELECT 'IP ' || i, 'kw' || i, date_trunc('second', now()) - interval '7200 seconds' + interval '6 seconds', now() FROM generate_series(1, 40) AS i`,
    );
    t = await startTestPlatform({
      roles: ['cluster', 'pipeline'], // the leader's start-up reconciliation schedules the 40 IPs
      redis,
      db,
      env: { SCHEDULER_BACKPRESSURE_THRESHOLD: '5', SCHEDULER_BATCH_SIZE: '50', SCHEDULER_TICK_MS: '1000', SCHEDULER_SPREAD_SECONDS: '1' },
    });
    q = new CrawlQueues(redis.url);
  });
  afterAll(async () => {
    await q?.close();
    await t?.stop();
    await db?.drop();
    await redis?.destroy();
  });

  it('never lets more than the threshold wait, and crawls every due IP', async () => {
    let maxWaiting = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const c = await q.crawl.getJobCounts('waiting', 'prioritized');
        maxWaiting = Math.max(maxWaiting, (c.waiting ?? 0) + (c.prioritized ?? 0));
        await sleep(20);
      }
    })();
    const crawled: number[] = [];
    const crawler = startStandInCrawler(
      redis.url,
      async (job) => {
        crawled.push(job.data.ipId);
        await sleep(100);
        return [onSale(`${job.data.ipId}-x`)];
      },
      { concurrency: 1 },
    );
    try {
      await waitFor(async () => (await t.platform.ctx.db.prisma.processedResult.count()) === 40, {
        timeoutMs: 90_000,
        intervalMs: 250,
        message: 'not every due IP was crawled',
      });
    } finally {
      sampling = false;
      await sampler;
      await crawler.close();
    }
    expect(maxWaiting).toBeGreaterThan(0);
    expect(maxWaiting).toBeLessThanOrEqual(5);
    expect(crawled.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const metrics = await t.platform.ctx.metrics.render();
    expect(Number(/wp_scheduler_held_back_total (\d+)/.exec(metrics.body)?.[1])).toBeGreaterThan(0);
    const pending = await q.pendingByIp();
    expect(pending.size).toBe(40);
    for (const jobs of pending.values()) expect(jobs).toHaveLength(1);
  }, 180_000);
});
