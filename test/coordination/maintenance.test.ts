/**
 * The platform's periodic work on the `maintenance` queue, as an operator sees it (one process
 * with the cluster role: the leader):
 *
 * - one job scheduler per task, its period from the settings; a scheduler the platform does not
 *   know (left by an older version, added by hand) is removed when a leader takes over;
 * - every task runs, at start where it should and then periodically: its runs are jobs named
 *   after the task, with their result, log lines and the instance that ran them;
 * - a run that fails is a failed job with its reason (and a metric), and the next run goes on;
 * - the processed-results trim does what it says.
 */
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const keys = createKeys('wp');
const TASKS = {
  'crawl-reconcile': 2000,
  'feeds-reconcile': 2000,
  'feeds-trim-articles': 3000,
  'instance-registry-trim': 1500,
  'processed-results-trim': 2000,
  'shared-config-publish': 500,
};

describe('maintenance queue', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let t: TestPlatform;
  let queue: Queue;
  let sql: pg.Client;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    // Left by an older version: a scheduler of a task that no longer exists.
    queue = new Queue('maintenance', { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: keys.bullPrefix });
    await queue.upsertJobScheduler('retired-task', { every: 60_000 }, { name: 'retired-task', data: { task: 'retired-task' } });
    await sql.query(
      `INSERT INTO processed_results (task_id, ip_id, item_count, processed_at) VALUES ('ip1-00000001', 1, 3, now() - interval '30 days'), ('ip1-00000002', 1, 3, now())`,
    );
    t = await startTestPlatform({
      roles: ['cluster', 'api'],
      redis,
      db,
      env: {
        INSTANCE_ID: 'maint-1',
        LEADER_TTL_MS: '3000',
        INSTANCE_TTL_MS: '3000',
        CONFIG_REFRESH_INTERVAL_MS: '500',
        SCHEDULER_RECONCILE_INTERVAL: '2',
        FEED_RECONCILE_INTERVAL_SECONDS: '2',
        FEED_HOUSEKEEPING_INTERVAL_SECONDS: '3',
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await queue?.close();
    await sql?.end();
    await db?.drop();
    await redis?.destroy();
  });

  const completedRuns = async (task: string) => (await queue.getJobs(['completed'], 0, -1)).filter((j) => j?.name === task);

  it('has one job scheduler per task with its period, and none other', async () => {
    const schedulers = await waitFor(
      async () => {
        const list = await queue.getJobSchedulers(0, -1);
        return list.some((s) => s.key === 'retired-task') ? undefined : list;
      },
      { message: 'schedulers not set up' },
    );
    expect(Object.fromEntries(schedulers.map((s) => [s.key, s.every]))).toEqual(TASKS);
    for (const s of schedulers) expect(s.template?.data).toEqual({ task: s.key });
  });

  it('runs every task, visible as jobs with their result, logs and the instance that ran them', async () => {
    for (const task of Object.keys(TASKS))
      await waitFor(async () => (await completedRuns(task)).length >= 2, { timeoutMs: 20_000, message: `${task} did not run twice` });
    // The start-up runs of a leader's term.
    const starts = (await queue.getJobs(['completed'], 0, -1)).filter((j) => j?.id?.includes('@term-')).map((j) => j.name);
    expect(new Set(starts)).toEqual(new Set(['crawl-reconcile', 'feeds-reconcile', 'feeds-sanitize-articles', 'shared-config-publish']));

    const reconcile = (await completedRuns('crawl-reconcile'))[0]!;
    expect(reconcile.processedBy).toBe('cluster@maint-1'); // <role>@<instance id>
    expect(reconcile.returnvalue).toMatchObject({ activeIps: 0, scheduled: 0, reAdded: 0, advanced: 0, orphansRemoved: 0, released: 0 });
    expect((await queue.getJobLogs(reconcile.id!)).logs).toEqual([
      expect.stringMatching(/^0 active IPs: 0 scheduled, 0 re-added, 0 advanced, 0 orphans removed, 0 released \(\d+ ms\)$/),
    ]);
    const published = (await completedRuns('shared-config-publish')).map((j) => j.returnvalue.kind);
    expect(published).toContain('published');
    expect(published).toContain('unchanged');
    expect((await completedRuns('feeds-reconcile'))[0]!.returnvalue).toEqual({ checked: 0, repaired: 0 });
    expect((await completedRuns('instance-registry-trim'))[0]!.returnvalue).toEqual({ removed: 0 });

    // The trim deleted the old processed task id and kept the recent one.
    expect((await sql.query('SELECT task_id FROM processed_results ORDER BY task_id')).rows).toEqual([{ task_id: 'ip1-00000002' }]);
    expect((await completedRuns('processed-results-trim')).some((j) => j.returnvalue.deleted === 1)).toBe(true);

    const metrics = (await t.platform.ctx.metrics.render()).body;
    for (const task of Object.keys(TASKS)) {
      expect(Number(new RegExp(`wp_maintenance_runs_total\\{task="${task}",outcome="ok"\\} (\\d+)`).exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
      expect(metrics).toMatch(new RegExp(`wp_maintenance_last_success_timestamp_seconds\\{task="${task}"\\} \\d`));
    }
  });

  it('shows a failing run as a failed job with its reason, and the next run goes on', async () => {
    await sql.query('ALTER TABLE processed_results RENAME TO processed_results_away');
    let failed;
    try {
      failed = await waitFor(async () => (await queue.getJobs(['failed'], 0, -1)).find((j) => j?.name === 'processed-results-trim'), {
        timeoutMs: 15_000,
        message: 'no failed run',
      });
    } finally {
      await sql.query('ALTER TABLE processed_results_away RENAME TO processed_results');
    }
    expect(failed.failedReason).toMatch(/processed_results/);
    expect(failed.attemptsMade).toBe(1);
    const metrics = (await t.platform.ctx.metrics.render()).body;
    expect(metrics).toMatch(/wp_maintenance_runs_total\{task="processed-results-trim",outcome="failed"\} [1-9]/);
    const before = (await completedRuns('processed-results-trim')).length;
    await waitFor(async () => (await completedRuns('processed-results-trim')).length > before, { timeoutMs: 15_000, message: 'the task did not run again' });
  });
});
