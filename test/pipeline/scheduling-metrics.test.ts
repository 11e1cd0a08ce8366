/**
 * The IPs' crawl health gauges (wp_ips_active, wp_ips_crawl_overdue: an aggregate over the whole
 * ips table) come from the leader of the crawl-scheduler task only: two pipeline processes on one
 * Redis and database, one exports the series, the other the families without series; when the
 * leader stops, the other takes the task over and exports them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const series = (body: string, name: string) => body.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
const metricsOf = async (t: TestPlatform) => (await t.platform.ctx.metrics.render()).body;
const leads = (t: TestPlatform) => t.platform.ctx.leadership.isLeader('crawl-scheduler');

describe('crawl health gauges', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let a: TestPlatform;
  let b: TestPlatform;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    // Two active IPs, one of them not crawled for three intervals; one inactive IP.
    await db.query(
      `INSERT INTO ips (name, keyword, active, interval_seconds, last_crawled_at, updated_at) VALUES
         ('fresh', 'kw-fresh', true, 3600, now(), now()),
         ('stale', 'kw-stale', true, 3600, now() - interval '3 hours', now()),
         ('off', 'kw-off', false, 3600, NULL, now())`,
    );
    const env = { LEADER_TTL_MS: '3000' };
    a = await startTestPlatform({ roles: ['pipeline'], redis, db, env });
    b = await startTestPlatform({ roles: ['pipeline'], redis, db, env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
    await redis?.destroy();
  });

  it('are exported by the crawl-scheduler leader only, and by the next leader after it stops', async () => {
    await waitFor(() => leads(a) || leads(b), { message: 'no process took the crawl-scheduler task' });
    const [leader, follower] = leads(a) ? [a, b] : [b, a];
    const [leaderBody, followerBody] = await Promise.all([metricsOf(leader), metricsOf(follower)]);
    expect(series(leaderBody, 'wp_ips_active')).toEqual(['wp_ips_active 2']);
    expect(series(leaderBody, 'wp_ips_crawl_overdue')).toEqual(['wp_ips_crawl_overdue 1']);
    expect(followerBody).toContain('# TYPE wp_ips_active gauge');
    expect(series(followerBody, 'wp_ips_active')).toEqual([]);
    expect(series(followerBody, 'wp_ips_crawl_overdue')).toEqual([]);
    // Every pipeline process exports the chains it sees.
    expect(series(followerBody, 'wp_scheduler_scheduled_ips')).toEqual(['wp_scheduler_scheduled_ips 0']);

    await leader.stop();
    await waitFor(() => leads(follower), { timeoutMs: 30_000, message: 'the other process did not take the crawl-scheduler task over' });
    const next = await metricsOf(follower);
    expect(series(next, 'wp_ips_active')).toEqual(['wp_ips_active 2']);
    expect(series(next, 'wp_ips_crawl_overdue')).toEqual(['wp_ips_crawl_overdue 1']);
  });
});
