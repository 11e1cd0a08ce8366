/**
 * A crawl that exhausts its attempts lands in the failed set (dead jobs) and its IP is still
 * rescheduled at its interval; so is an IP whose result cannot be processed. Done by the crawl
 * flow's parent (the crawl is an ignored dependency when it fails for good) and by the result
 * processor on its final failure, not by reconciliation (which runs only at start here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, resultOf, startStandInCrawler } from './helpers.js';

describe('rescheduling after final failures', () => {
  let t: TestPlatform;
  let q: CrawlQueues;
  let crawler: ReturnType<typeof startStandInCrawler>;
  /** The crawls of `broken-unlucky` fail only once the test opened this gate (it reads the IP's detail first). */
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['cluster', 'pipeline', 'api'], env: { JOB_ATTEMPTS: '2', JOB_BACKOFF_MS: '50' } });
    q = new CrawlQueues(t.redis.url);
    crawler = startStandInCrawler(t.redis.url, async (job) => {
      if (job.data.keyword.startsWith('broken-')) {
        if (job.data.keyword === 'broken-unlucky') await gate;
        throw new Error(`marketplace unreachable for ${job.data.keyword}`);
      }
      return [onSale(`${job.data.ipId}-1`)];
    });
  });
  afterAll(async () => {
    await crawler?.close();
    await q?.close();
    await t?.stop();
  });

  it('reschedules an IP whose crawl failed for good, and shows the crawl among the dead jobs', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Unlucky', keyword: 'broken-unlucky' })).body;
    const failedTask = ip.currentCrawl.taskId as string;
    // The IP's detail is read (and cached) while its first crawl is due now.
    const firstDetail = await t.api.get(`/api/ips/${ip.id}`);
    expect(Date.parse(firstDetail.body.nextCrawlAt)).toBeLessThan(Date.now() + 60_000);
    expect((await t.api.get(`/api/ips/${ip.id}`)).headers.get('x-cache')).toBe('hit');
    openGate();
    await waitFor(async () => (await q.crawl.getJobState(failedTask)) === 'failed', { message: 'crawl did not fail for good' });
    const failed = (await q.crawl.getJob(failedTask))!;
    expect(failed.attemptsMade).toBe(2);

    const next = await waitFor(
      async () => {
        const c = await q.chain(ip.id);
        return c && c !== failedTask ? c : undefined;
      },
      { message: 'the IP was not rescheduled' },
    );
    const pending = await q.pendingFor(ip.id);
    expect(pending.map((j) => j.id)).toEqual([next]);
    expect(await pending[0]!.getState()).toBe('delayed');
    expect(pending[0]!.delay).toBeGreaterThan(7000_000);
    // The crawl's flow: its parent ran without a result and moved the chain on (the chain moves
    // first, the parent completes once the next crawl is recorded).
    // The state first, then the job: a job read before it completed keeps no return value.
    const parent = await waitFor(
      async () => ((await q.results.getJobState(`result-${failedTask}`)) === 'completed' ? q.results.getJob(`result-${failedTask}`) : undefined),
      { message: "the crawl's parent did not complete" },
    );
    expect(parent.returnvalue).toMatchObject({ status: 'crawl_failed', reason: 'marketplace unreachable for broken-unlucky', nextTaskId: next });

    // The detail shows the new next crawl at once, not the cached one for the cache's TTL.
    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(Date.parse(detail.nextCrawlAt)).toBeGreaterThan(Date.now() + 7000_000);

    const dead = await t.api.get('/api/dead-jobs');
    const entry = dead.body.jobs.find((j: { id: string }) => j.id === failedTask);
    expect(entry).toMatchObject({ queue: 'crawl', attemptsMade: 2, failedReason: 'marketplace unreachable for broken-unlucky' });
  });

  it('reschedules an IP whose result could not be processed', async () => {
    // The real crawl never delivers; a garbled result arrives instead.
    const ip = (await t.api.post('/api/ips', { name: 'Garbled', keyword: 'broken-garbled' })).body;
    const taskId = ip.currentCrawl.taskId as string;
    await waitFor(async () => (await q.crawl.getJobState(taskId)) === 'failed');
    // Undo the crawl failure's rescheduling to look at the result path alone.
    const afterCrawlFailure = await waitFor(() => q.chain(ip.id).then((c) => (c !== taskId ? c : undefined)));
    await q.crawl.remove(afterCrawlFailure);
    const garbled = { ...resultOf({ ipId: ip.id, taskId: afterCrawlFailure }, [onSale('g')]), crawledAt: 'yesterday' };
    const job = await q.results.add('result', garbled, { jobId: `result-${afterCrawlFailure}` });
    await waitFor(async () => (await q.results.getJobState(job.id!)) === 'failed', { message: 'garbled result not failed' });
    expect((await q.results.getJob(job.id!))!.failedReason).toMatch(/crawledAt/);

    const next = await waitFor(() => q.chain(ip.id).then((c) => (c !== afterCrawlFailure ? c : undefined)), {
      message: 'not rescheduled after the failed result',
    });
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([next]);
  });
});
