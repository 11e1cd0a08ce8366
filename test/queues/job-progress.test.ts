/**
 * Progress and log lines of the pools' and messages' jobs, as Bull Board's job view shows them
 * (the job's progress and its log list): a pool refill reports the rows it pushed, the marking of
 * popped rows the rows it marked, a message drain the messages it wrote. (Crawls and feed
 * refreshes, also through GET /api/tasks/:id: test/pipeline/crawl-end-to-end, test/crawl/crawler-role,
 * test/feeds/feed-refresh.)
 */
import type { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBatch, popOne } from '../pools/pool-helpers.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('job progress and logs', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api', 'pools', 'messages'],
      env: {
        POOL_SIZE: '30',
        POOL_REFILL_THRESHOLD: '10',
        POOL_REFILL_BATCH: '20',
        POOL_CHECK_INTERVAL_MS: '3600000',
        POOL_TRIGGER_INTERVAL_MS: '0',
        MESSAGE_PERSIST_TRIGGER_MS: '0',
      },
    });
  });
  afterAll(() => t?.stop());

  /** Completed jobs of one name, once `enough` holds for them. */
  const completed = (queue: Queue, name: string, enough: (jobs: Job[]) => boolean) =>
    waitFor(
      async () => {
        const jobs = (await queue.getJobs(['completed'], 0, -1)).filter((j: Job | undefined) => j?.name === name);
        return enough(jobs) ? jobs : undefined;
      },
      { message: `no completed ${name} jobs` },
    );
  const logsOf = async (queue: Queue, job: Job) => (await queue.getJobLogs(job.id!)).logs;

  it('shows the rows a pool refill pushed and the rows a marking marked', async () => {
    const queues = t.platform.ctx.queues;
    await importBatch(t.api, 'titles', 4, 1, 25);
    const [refill] = await completed(queues.queue('poolRefill'), 'refill:titles:4', (jobs) => jobs.length > 0);
    expect(refill!.progress).toEqual({ type: 'titles', groupId: 4, pushed: 25, length: 25 }); // 20, then 5: the last report
    expect(await logsOf(queues.queue('poolRefill'), refill!)).toEqual(['titles group 4: 25 rows pushed, 25 pooled']);

    for (let i = 0; i < 3; i++) expect(await popOne(t.api, 'titles', 4)).toBeDefined();
    const consumed = queues.queue('poolConsumed');
    const markings = await completed(consumed, 'consumed:titles:4', (jobs) => jobs.reduce((n, j) => n + j.returnvalue.marked, 0) === 3);
    for (const job of markings) expect(await logsOf(consumed, job)).toEqual([`titles group 4: ${job.returnvalue.marked} rows marked consumed`]);
  });

  it('shows the messages a drain wrote', async () => {
    for (let i = 0; i < 5; i++) expect((await t.api.post('/api/sessions/progress-1/messages', { role: 'user', content: `m${i}` })).status).toBe(201);
    const queue = t.platform.ctx.queues.queue('messagePersist');
    const drains = await completed(queue, 'drain', (jobs) => jobs.reduce((n, j) => n + j.returnvalue.inserted, 0) === 5);
    for (const job of drains.filter((j) => j.returnvalue.drained > 0)) {
      const { drained, inserted } = job.returnvalue;
      expect(job.progress).toEqual({ shard: job.data.shard, drained, inserted });
      expect(await logsOf(queue, job)).toEqual([`buffer ${job.data.shard}: ${drained} messages drained, ${inserted} new rows`]);
    }
  });
});
