/**
 * Bull Board's own buttons on the jobs of a chain (one pending crawl per IP, one pending refresh per
 * feed), called through the board's API as its UI calls them, on a platform with the feeds,
 * pipeline and api roles, a stand-in crawler (the platform's worker factory and its crawl flow) and
 * a local feed server:
 *
 * - "Retry" on a dead crawl runs the IP's current crawl now (never the dead one, which would fail
 *   as `stale_crawl`); on a dead refresh it runs the feed's pending refresh now (never a second
 *   one beside it); "Retry all" does the same for each dead job;
 * - "Promote" on a delayed crawl runs it as its IP's crawl now (recorded as its next crawl); a
 *   delayed crawl that is not its IP's current one is refused; "Promote all" promotes each one;
 * - a completed link is not retried (409), one by one or all at once;
 * - a crawl's flow is shown from the crawl's own page as from its result's.
 * After each, the IP or feed has exactly one pending job.
 */
import type { Job, JobType, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_STATES } from '../../src/queues/job-states.js';
import { startStandInCrawler, type StandInCrawler } from '../cluster-mode/stand-in-crawler.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { onSale } from '../pipeline/helpers.js';
import { jobsOfFeed, pendingJobsOfFeed, waitForTask } from '../feeds/support.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const BOARD = '/admin/queues/api';

describe("Bull Board's buttons keep the chains", () => {
  let t: TestPlatform;
  let server: FeedServer;
  let crawler: StandInCrawler;
  let crawl: Queue;
  let results: Queue;
  let refreshes: Queue;
  /** IPs whose keyword starts with `broken-` fail to crawl until listed here. */
  const healed = new Set<number>();

  beforeAll(async () => {
    server = await startFeedServer();
    t = await startTestPlatform({
      roles: ['feeds', 'pipeline', 'api'],
      env: {
        JOB_ATTEMPTS: '2',
        JOB_BACKOFF_MS: '20',
        OUTBOUND_ALLOW: '127.0.0.0/8',
        FEED_DOMAIN_MIN_INTERVAL_MS: '0',
        FEED_RECONCILE_INTERVAL_SECONDS: '0',
      },
    });
    const ctx = t.platform.ctx;
    crawler = startStandInCrawler(ctx, {
      items: (job) => {
        if (job.data.keyword.startsWith('broken-') && !healed.has(job.data.ipId)) throw new Error(`marketplace unreachable for IP ${job.data.ipId}`);
        return [onSale(`${job.data.ipId}-a`, 100)];
      },
    });
    crawl = ctx.queues.queue('crawl');
    results = ctx.queues.queue('crawlResult');
    refreshes = ctx.queues.queue('feedRefresh');
  });
  afterAll(async () => {
    await crawler?.close();
    await t?.stop();
    await server?.stop();
  });

  const board = (method: string, path: string, body?: unknown) => t.api.request(method, `${BOARD}${path}`, body);
  const pendingCrawls = async (ipId: number) => (await crawl.getJobs([...PENDING_STATES] as JobType[], 0, -1)).filter((j) => j?.data.ipId === ipId);
  const createIp = async (keyword: string) => (await t.api.post('/api/ips', { name: keyword, keyword })).body as { id: number };
  /**
   * The IP's first crawl once it is over (completed or dead). Not the `currentCrawl` the creation
   * answers: the crawl may have run and the IP moved on before that answer was made.
   */
  const firstCrawl = (ipId: number, state: 'completed' | 'failed') =>
    waitFor(async () => (await crawl.getJobs([state], 0, -1)).find((j) => j?.data.ipId === ipId)?.id, {
      timeoutMs: 20_000,
      message: `no ${state} crawl of IP ${ipId}`,
    });
  /** Waits for the result of crawl `taskId` to be processed (the failure says where crawl and result stand). */
  const processed = async (taskId: string) => {
    let seen = '';
    await waitFor(
      async () => {
        const [c, r] = await Promise.all([crawl.getJobState(taskId), results.getJobState(`result-${taskId}`)]);
        seen = `crawl ${c}, result ${r}`;
        return r === 'completed';
      },
      { timeoutMs: 30_000, message: `the result of ${taskId} was not processed` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${seen}`);
    });
  };
  /** The IP's one pending crawl once its chain has moved past `taskId`. */
  const nextPending = (ipId: number, taskId: string) =>
    waitFor(
      async () => {
        const pending = await pendingCrawls(ipId);
        return pending.length === 1 && pending[0]!.id !== taskId ? pending[0]! : undefined;
      },
      { timeoutMs: 20_000, message: `IP ${ipId} did not move on from ${taskId} to one pending crawl` },
    );
  async function deadCrawl(keyword: string): Promise<{ ipId: number; dead: string; next: Job }> {
    const ip = await createIp(keyword);
    const dead = await firstCrawl(ip.id, 'failed');
    return { ipId: ip.id, dead, next: await nextPending(ip.id, dead) };
  }

  it("retries a dead crawl as its IP's current crawl, now: it runs once, no stale crawl, one pending crawl after", async () => {
    const { ipId, dead, next } = await deadCrawl('broken-retry');
    expect(await next.getState()).toBe('delayed'); // at the IP's interval
    healed.add(ipId);

    const res = await board('PUT', `/queues/crawl/${dead}/retry`);
    expect(res.status).toBeLessThan(300);
    expect(await crawl.getJob(dead)).toBeUndefined(); // out of the failed set, never run again
    await processed(next.id!); // the IP's crawl ran now, not at its interval
    expect(res.body).toMatchObject({ id: dead, state: 'replaced', chain: { status: 'crawl_now', taskId: next.id, crawl: 'moved_forward' } });
    const after = await nextPending(ipId, next.id!);
    expect(await after.getState()).toBe('delayed');
    expect(crawler.runs.get(dead)).toBe(2); // its two attempts, none more
    expect((await crawl.getJobs(['failed'], 0, -1)).filter((j) => j?.data.ipId === ipId)).toEqual([]);
    expect((await t.api.get(`/api/ips/${ipId}`)).body.lastCrawledAt).not.toBeNull();
  });

  it("retries a dead refresh as the feed's pending refresh, now: never a second pending one", async () => {
    server.setStatus('board-retry', 404);
    const feed = (await t.api.post('/api/feeds', { url: server.url('/versioned/board-retry.xml') })).body as { id: number; taskId: string };
    expect((await waitForTask(t.api, feed.taskId)).state).toBe('failed');
    const chain = await waitFor(async () => {
      const pending = await pendingJobsOfFeed(refreshes, feed.id);
      return pending.length === 1 ? pending[0]! : undefined;
    });
    server.setStatus('board-retry', undefined);

    // With the queue paused, what the retry left is seen before any of it runs.
    await refreshes.pause();
    try {
      const res = await board('PUT', `/queues/feed-refresh/${feed.taskId}/retry`);
      expect(res.status).toBeLessThan(300);
      const pending = await pendingJobsOfFeed(refreshes, feed.id);
      expect(pending.map((j) => [j.id, j.data.trigger])).toEqual([[chain.id, 'periodic']]);
      expect(await refreshes.getJob(feed.taskId)).toBeUndefined();
      expect(res.body.chain).toEqual({ jobId: feed.taskId, status: 'moved_forward', taskId: chain.id });
    } finally {
      await refreshes.resume();
    }

    expect((await waitForTask(t.api, chain.id!)).result).toMatchObject({ outcome: 'refreshed' });
    expect((await t.api.get(`/api/feeds/${feed.id}`)).body).toMatchObject({ status: 'ok', errorCount: 0 });
    const next = await waitFor(async () => {
      const p = await pendingJobsOfFeed(refreshes, feed.id);
      return p.length === 1 && p[0]!.id !== chain.id ? p[0]! : undefined;
    });
    expect(await next.getState()).toBe('delayed');
  });

  it('"Retry all" of the failed crawls replays each through its chain', async () => {
    const dead = [await deadCrawl('broken-all-1'), await deadCrawl('broken-all-2')];
    for (const d of dead) healed.add(d.ipId);
    const res = await board('PUT', '/queues/crawl/retry/failed');
    expect(res.status).toBe(200);
    for (const { ipId, dead: id, next } of dead) {
      expect(await crawl.getJob(id)).toBeUndefined();
      await processed(next.id!);
      await nextPending(ipId, next.id!);
      expect(crawler.runs.get(id)).toBe(2);
    }
    expect(await crawl.getJobCountByTypes('failed')).toBe(0);
    expect(res.body).toEqual({ retried: 2, skipped: 0 });
  });

  it("promotes a delayed crawl as its IP's crawl now, recorded as its next crawl; one pending crawl after", async () => {
    const ip = await createIp('promoted');
    const first = await firstCrawl(ip.id, 'completed');
    await processed(first);
    const delayed = await nextPending(ip.id, first);
    expect(await delayed.getState()).toBe('delayed');

    await crawl.pause();
    try {
      const before = Date.now();
      const res = await board('PUT', `/queues/crawl/${delayed.id}/promote`);
      expect(res.status).toBeLessThan(300);
      expect((await pendingCrawls(ip.id)).map((j) => j.id)).toEqual([delayed.id]);
      expect(await delayed.getState()).toBe('waiting');
      // Recorded as the IP's next crawl: now, no longer at its interval.
      const nextCrawlAt = Date.parse((await t.api.get(`/api/ips/${ip.id}`)).body.nextCrawlAt);
      expect(nextCrawlAt).toBeGreaterThanOrEqual(before - 1000);
      expect(nextCrawlAt).toBeLessThanOrEqual(Date.now() + 1000);
      expect(res.body).toMatchObject({ id: delayed.id, state: 'waiting', chain: { status: 'moved_forward', taskId: delayed.id } });
    } finally {
      await crawl.resume();
    }
    await processed(delayed.id!);
    expect(await (await nextPending(ip.id, delayed.id!)).getState()).toBe('delayed');

    // Promoting what is not delayed is refused.
    const again = await board('PUT', `/queues/crawl/${delayed.id}/promote`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'not_delayed', field: 'jobId' });
  });

  it('refuses to promote a delayed crawl that is not its IP\'s current crawl, alone or in "Promote all"', async () => {
    const ip = await createIp('orphaned');
    const first = await firstCrawl(ip.id, 'completed');
    await processed(first);
    const current = await nextPending(ip.id, first);
    // A crawl the chain does not hold (what the reconciliation removes), due in an hour.
    const orphan = await crawl.add('crawl', { ...current.data, taskId: `ip${ip.id}-0000beef` }, { jobId: `ip${ip.id}-0000beef`, delay: 3_600_000 });

    const res = await board('PUT', `/queues/crawl/${orphan.id}/promote`);
    expect(await orphan.getState()).toBe('delayed');
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'not_in_chain', field: 'jobId', key: 'ERRORS.FORBIDDEN' });
    expect(res.body.message).toMatch(/not its IP's current crawl/);

    await crawl.pause();
    try {
      const all = await board('PUT', '/queues/crawl/promote');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ queue: 'crawl', skipped: 1 });
      expect(all.body.promoted).toBeGreaterThanOrEqual(1);
      expect((await crawl.getJobs(['delayed'], 0, -1)).map((j) => j.id)).toEqual([orphan.id]); // the orphan alone
      expect((await pendingCrawls(ip.id)).map((j) => j.id).sort()).toEqual([current.id, orphan.id].sort());
      expect(await current.getState()).toBe('waiting');
    } finally {
      await orphan.remove();
      await crawl.resume();
    }
    await processed(current.id!);
  });

  it('promotes a delayed refresh: it runs now and the feed keeps one pending refresh', async () => {
    const feed = (await t.api.post('/api/feeds', { url: server.url('/rss/board-promote.xml') })).body as { id: number; taskId: string };
    await waitForTask(t.api, feed.taskId);
    const chain = await waitFor(async () => {
      const pending = await pendingJobsOfFeed(refreshes, feed.id);
      return pending.length === 1 ? pending[0]! : undefined;
    });
    expect(await chain.getState()).toBe('delayed');
    const res = await board('PUT', `/queues/feed-refresh/${chain.id}/promote`);
    expect(res.status).toBeLessThan(300);
    expect((await waitForTask(t.api, chain.id!)).result).toMatchObject({ outcome: 'refreshed', trigger: 'periodic' });
    const next = await waitFor(async () => {
      const p = await pendingJobsOfFeed(refreshes, feed.id);
      return p.length === 1 && p[0]!.id !== chain.id ? p[0]! : undefined;
    });
    expect(await next.getState()).toBe('delayed');
    expect(await jobsOfFeed(refreshes, feed.id, ['failed'])).toEqual([]);
  });

  it('does not retry a completed link, alone or all at once', async () => {
    const ip = await createIp('finished');
    const first = await firstCrawl(ip.id, 'completed');
    await processed(first);
    const next = await nextPending(ip.id, first);
    const done = first;
    expect(await crawl.getJobState(done)).toBe('completed');

    const one = await board('PUT', `/queues/crawl/${done}/retry`);
    const all = await board('PUT', '/queues/crawl/retry/completed');
    expect(await crawl.getJobState(done)).toBe('completed');
    expect((await pendingCrawls(ip.id)).map((j) => j.id)).toEqual([next.id]);
    expect(one.status).toBe(409);
    expect(one.body.error).toMatchObject({ code: 'finished_link', field: 'jobId' });
    expect(one.body.message).toMatch(/POST \/api\/ips\/:id\/crawl/);
    expect(all.status).toBe(409);
    expect(all.body.error).toMatchObject({ code: 'chained_queue', field: 'queueStatus' });
    // The board's UI is told too: no "Retry" on completed jobs of a chain.
    const listed = await board('GET', '/queues?activeQueue=crawl&status=completed');
    expect(listed.body.queues.find((q: { name: string }) => q.name === 'crawl')).toMatchObject({ allowCompletedRetries: false });
    expect(listed.body.queues.find((q: { name: string }) => q.name === 'pool-refill')).toMatchObject({ allowCompletedRetries: true });
  });

  it("shows a crawl's flow from the crawl's own page, as from its result's", async () => {
    const ip = await createIp('flow-view');
    const taskId = await firstCrawl(ip.id, 'completed');
    await processed(taskId);
    for (const [queue, id] of [
      ['crawl', taskId],
      ['crawl-result', `result-${taskId}`],
    ]) {
      const res = await board('GET', `/queues/${queue}/${id}/flow`);
      expect(res.status).toBe(200);
      expect(res.body, `${queue}/${id}`).toMatchObject({
        nodeId: id,
        isFlowNode: true,
        flowRoot: { id: `result-${taskId}`, queueName: 'crawl-result', state: 'completed', children: [{ id: taskId, queueName: 'crawl', state: 'completed' }] },
      });
    }
  });
});
