/**
 * Bull Board as an operator meets it, through the board's own API (what its UI calls), on a
 * platform with the feeds, pools and api roles:
 *
 * - the fleet: the Workers panel of a queue names the processes serving it (`<role>@<instance>`),
 *   the throughput graphs have BullMQ's metrics, the Redis panel answers, and the "Add job" form
 *   gets the queue's payload schema;
 * - "Add job" and "Edit data" keep the rules: refused (409, nothing added or changed) where only
 *   the platform adds or writes (a crawl, a result, a refresh, a maintenance run), checked against
 *   the payload schema (400 naming the field), options limited to delay and priority;
 * - buttons that would drop a chain's pending job, or the leader's schedulers, are refused
 *   (remove, clean, empty, obliterate, remove children, scheduler remove and edit); the others
 *   still reach bull-board;
 * - bad input and other roles are refused like any admin route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/accounts.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { pendingJobsOfFeed, waitForTask } from '../feeds/support.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const BOARD = '/admin/queues/api';
const CRAWL = { ipId: 7, keyword: 'kept', taskId: 'ip7-0000aaaa', pagesOnSale: 1, pagesSold: 1 };

describe('Bull Board: the fleet, and the rules of "Add job", "Edit data" and removals', () => {
  let t: TestPlatform;
  let server: FeedServer;

  beforeAll(async () => {
    server = await startFeedServer();
    t = await startTestPlatform({
      roles: ['feeds', 'pools', 'api'],
      env: { INSTANCE_ID: 'board-1', OUTBOUND_ALLOW: '127.0.0.0/8', FEED_DOMAIN_MIN_INTERVAL_MS: '0', FEED_RECONCILE_INTERVAL_SECONDS: '0' },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await server?.stop();
  });

  const board = (method: string, path: string, body?: unknown) => t.api.request(method, `${BOARD}${path}`, body);
  const queue = (key: Parameters<TestPlatform['platform']['ctx']['queues']['queue']>[0]) => t.platform.ctx.queues.queue(key);

  it('names the processes serving each queue, records throughput, shows Redis and the payload schema', async () => {
    const workers = await board('GET', '/queues/feed-refresh/workers');
    expect(workers.status).toBe(200);
    expect(workers.body.workers.map((w: { name: string }) => w.name)).toEqual(['feeds@board-1']);
    expect((await board('GET', '/queues/pool-refill/workers')).body.workers.map((w: { name: string }) => w.name)).toEqual(['pools@board-1']);

    const added = await board('POST', '/queues/pool-refill/add', { name: 'refill', data: { kind: 'refill', type: 'titles', groupId: 3 }, options: {} });
    expect(added.status).toBe(200);
    await waitFor(async () => (await queue('poolRefill').getJobState(added.body.job.id)) === 'completed', { message: 'the refill did not run' });
    expect(
      await queue('poolRefill')
        .getJob(added.body.job.id)
        .then((j) => j?.processedBy),
    ).toBe('pools@board-1');
    const metrics = await waitFor(async () => {
      const m = (await board('GET', '/queues/pool-refill/metrics')).body;
      return m.completed?.meta.count >= 1 ? m : undefined;
    });
    expect(metrics.failed.meta.count).toBe(0);

    const redis = await board('GET', '/redis/stats');
    expect(redis.status).toBe(200);
    expect(redis.body).toMatchObject({ backend: 'redis', mode: 'standalone', version: expect.stringMatching(/^\d+\.\d+/) });
    expect(redis.body.clients.connected).toBeGreaterThan(0);

    const schema = await board('GET', '/queues/pool-consumed/job-data-schema');
    expect(schema.status).toBe(200);
    expect(schema.body).toMatchObject({ type: 'object', required: ['type', 'groupId'], properties: { type: { enum: ['titles', 'contents'] } } });
    expect((await board('GET', '/queues')).body.queues.find((q: { name: string }) => q.name === 'crawl').description).toMatch(/Headless-browser crawl/);
  });

  it('refuses "Add job" where only the platform adds jobs, and adds nothing', async () => {
    const cases: [string, unknown, string, RegExp][] = [
      ['crawl', CRAWL, 'chained_queue', /POST \/api\/ips\/:id\/crawl/],
      ['crawl-result', { ipId: 7, taskId: 'ip7-0000aaaa' }, 'chained_queue', /only a crawl produces one/],
      ['feed-refresh', { feedId: 1, trigger: 'manual' }, 'chained_queue', /POST \/api\/queue\/schedule-feed/],
      ['maintenance', { task: 'crawl-reconcile' }, 'platform_queue', /Schedulers view/],
    ];
    for (const [name, data, code, message] of cases) {
      const res = await board('POST', `/queues/${name}/add`, { name: '__default__', data, options: {} });
      expect(res.status, name).toBe(409);
      expect(res.body.error, name).toMatchObject({ code, field: 'queueName', key: 'ERRORS.FORBIDDEN' });
      expect(res.body.message, name).toMatch(message);
    }
    for (const key of ['crawl', 'crawlResult', 'maintenance'] as const) expect(await queue(key).count(), key).toBe(0);
    expect(await queue('feedRefresh').getJobCountByTypes('waiting', 'prioritized', 'delayed')).toBe(0);
  });

  it('checks "Add job" against the payload schema and its options, naming the field', async () => {
    const consumed = queue('poolConsumed');
    const before = await consumed.count();
    const cases: [unknown, string][] = [
      [{ data: { type: 'titles', groupId: 'seven' } }, 'data.groupId'],
      [{ data: { type: 'pictures', groupId: 7 } }, 'data.type'],
      [{ data: { type: 'titles', groupId: 7 }, options: { jobId: '1' } }, 'options.jobId'],
      [{ data: { type: 'titles', groupId: 7 }, options: { attempts: 99 } }, 'options.attempts'],
      [{ data: { type: 'titles', groupId: 7 }, options: { repeat: { every: 1000 } } }, 'options.repeat'],
      [{ data: { type: 'titles', groupId: 7 }, options: { delay: -5 } }, 'options.delay'],
      [{ data: { type: 'titles', groupId: 7 }, options: { priority: 1.5 } }, 'options.priority'],
      [{ data: { type: 'titles', groupId: 7 }, extra: true }, 'extra'],
      [{ name: 'x'.repeat(101), data: { type: 'titles', groupId: 7 } }, 'name'],
      [{ data: { type: 'titles\u0000', groupId: 7 } }, 'data.type'],
    ];
    for (const [body, field] of cases) {
      const res = await board('POST', '/queues/pool-consumed/add', body);
      expect(res.status, field).toBe(400);
      expect(res.body.error, field).toMatchObject({ field, key: 'ERRORS.INVALID_REQUEST_BODY', options: { field } });
    }
    expect(await consumed.count()).toBe(before);
    const unknown = await board('POST', '/queues/nope/add', { data: {} });
    expect([unknown.status, unknown.body.error.key]).toEqual([404, 'ERRORS.QUEUE_NOT_FOUND']);

    // The queue's own options (what "Duplicate" sends back) and a delay are accepted.
    const dup = await board('POST', '/queues/pool-consumed/add', {
      name: 'mark',
      data: { type: 'titles', groupId: 7 },
      options: { attempts: consumed.defaultJobOptions.attempts, delay: 60_000 },
    });
    expect(dup.status).toBe(200);
    expect(dup.body).toMatchObject({ status: 'delayed', job: { name: 'mark', data: { type: 'titles', groupId: 7 } } });
    expect(await consumed.getJobState(dup.body.job.id)).toBe('delayed');
  });

  it('checks "Edit data" against the payload schema and the fields the platform writes', async () => {
    const consumed = queue('poolConsumed');
    const job = await consumed.add('mark', { type: 'titles', groupId: 8 }, { delay: 60_000 });
    const bad = await board('PATCH', `/queues/pool-consumed/${job.id}/update-data`, { jobData: { type: 'titles', groupId: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_payload', field: 'jobData.groupId' });
    expect((await board('PATCH', `/queues/pool-consumed/${job.id}/update-data`, {})).body.error.field).toBe('jobData');
    expect((await consumed.getJob(job.id!))!.data).toEqual({ type: 'titles', groupId: 8 });
    const good = await board('PATCH', `/queues/pool-consumed/${job.id}/update-data`, { jobData: { type: 'contents', groupId: 9 } });
    expect(good.status).toBe(200);
    expect((await consumed.getJob(job.id!))!.data).toEqual({ type: 'contents', groupId: 9 });

    // A pending crawl: its IP, task and keyword are the platform's; its pages may change.
    const crawl = await t.platform.ctx.queues.add('crawl', 'crawl', CRAWL, { jobId: CRAWL.taskId, delay: 3_600_000 }, CRAWL.ipId);
    const keyword = await board('PATCH', `/queues/crawl/${crawl.id}/update-data`, { jobData: { ...CRAWL, keyword: 'other' } });
    expect(keyword.status).toBe(409);
    expect(keyword.body.error).toMatchObject({ code: 'platform_field', field: 'jobData.keyword' });
    expect(keyword.body.message).toMatch(/PATCH|POST \/api\/ips/);
    expect((await board('PATCH', `/queues/crawl/${crawl.id}/update-data`, { jobData: { ...CRAWL, pagesOnSale: 99 } })).body.error.field).toBe(
      'jobData.pagesOnSale',
    );
    expect((await board('PATCH', `/queues/crawl/${crawl.id}/update-data`, { jobData: { ...CRAWL, pagesOnSale: 3 } })).status).toBe(200);
    expect((await queue('crawl').getJob(crawl.id!))!.data).toEqual({ ...CRAWL, pagesOnSale: 3 });
    await crawl.remove();

    // A refresh's data is all the platform's (unchanged data is no change).
    const feed = (await t.api.post('/api/feeds', { url: server.url('/rss/edited.xml') })).body as { id: number; taskId: string };
    await waitForTask(t.api, feed.taskId);
    const pending = await waitFor(async () => (await pendingJobsOfFeed(queue('feedRefresh'), feed.id))[0]);
    const trigger = await board('PATCH', `/queues/feed-refresh/${pending.id}/update-data`, { jobData: { ...pending.data, trigger: 'manual' } });
    expect(trigger.status).toBe(409);
    expect(trigger.body.error).toMatchObject({ code: 'platform_field', field: 'jobData.trigger' });
    expect((await board('PATCH', `/queues/feed-refresh/${pending.id}/update-data`, { jobData: pending.data })).status).toBe(200);
    expect((await queue('feedRefresh').getJob(pending.id!))!.data).toEqual(pending.data);
    expect((await board('PATCH', '/queues/feed-refresh/no-such-job/update-data', { jobData: pending.data })).body.error).toMatchObject({
      key: 'ERRORS.JOB_NOT_FOUND',
      field: 'jobId',
    });
  });

  it("refuses removals that would drop a chain's pending job; removes finished ones", async () => {
    const refreshes = queue('feedRefresh');
    const feed = (await t.api.post('/api/feeds', { url: server.url('/rss/removed.xml') })).body as { id: number; taskId: string };
    await waitForTask(t.api, feed.taskId);
    const pending = await waitFor(async () => (await pendingJobsOfFeed(refreshes, feed.id))[0]);

    const one = await board('PUT', `/queues/feed-refresh/${pending.id}/clean`);
    expect(one.status).toBe(409);
    expect(one.body.error).toMatchObject({ code: 'chained_job', field: 'jobId' });
    for (const status of ['delayed', 'wait', 'prioritized', 'paused']) {
      const all = await board('PUT', `/queues/feed-refresh/clean/${status}`);
      expect(all.status, status).toBe(409);
      expect(all.body.error.field).toBe('queueStatus');
    }
    for (const action of ['empty', 'obliterate']) {
      for (const name of ['feed-refresh', 'crawl', 'maintenance'])
        expect((await board('PUT', `/queues/${name}/${action}`)).status, `${action} ${name}`).toBe(409);
    }
    expect((await board('PUT', '/queues/crawl-result/result-ip7-0000aaaa/remove-unprocessed-children')).status).toBe(409);
    expect((await pendingJobsOfFeed(refreshes, feed.id)).map((j) => j.id)).toEqual([pending.id]);

    // Finished jobs go (bull-board's own removal).
    expect(await refreshes.getJobState(feed.taskId)).toBe('completed');
    expect((await board('PUT', `/queues/feed-refresh/${feed.taskId}/clean`)).status).toBe(204);
    expect(await refreshes.getJob(feed.taskId)).toBeUndefined();
    expect((await board('PUT', '/queues/feed-refresh/clean/completed')).status).toBe(200);
    // Queues without chains keep bull-board's buttons.
    expect((await board('PUT', '/queues/pool-consumed/empty')).status).toBe(200);
  });

  it("refuses to remove or re-time the leader's maintenance schedulers", async () => {
    const maintenance = queue('maintenance');
    await maintenance.upsertJobScheduler('board-task', { every: 3_600_000 }, { name: 'board-task', data: { task: 'board-task' } });
    const removed = await board('PUT', '/queues/maintenance/job-schedulers/board-task/remove');
    expect(removed.status).toBe(409);
    expect(removed.body.error).toMatchObject({ code: 'platform_queue', field: 'schedulerId' });
    expect((await board('PATCH', '/queues/maintenance/job-schedulers/board-task', { every: 1000 })).status).toBe(409);
    expect(await maintenance.getJobScheduler('board-task')).toMatchObject({ every: 3_600_000 });
    await maintenance.removeJobScheduler('board-task');
  });

  it('answers only admins, and bad input like any admin route', async () => {
    const user = await createUser(t, 'board-user');
    for (const [method, path] of [
      ['PUT', '/queues/crawl/ip7-0000aaaa/retry'],
      ['POST', '/queues/pool-consumed/add'],
      ['PUT', '/queues/crawl/promote'],
    ] as const) {
      expect((await user.request(method, `${BOARD}${path}`, { data: {} })).status, path).toBe(403);
      expect((await t.api.withToken(undefined).request(method, `${BOARD}${path}`, { data: {} })).status, path).toBe(401);
    }
    const notJson = await t.api.request('POST', `${BOARD}/queues/pool-consumed/add`, '{"data":', { 'content-type': 'application/json' });
    expect(notJson.status).toBe(400);
    const huge = await board('POST', '/queues/pool-consumed/add', { data: { type: 'titles', groupId: 7, pad: 'x'.repeat(2_000_000) } });
    expect(huge.status).toBe(413);
    expect((await board('PUT', '/queues/nope/no-job/retry')).status).toBe(404);
    expect((await board('PUT', '/queues/feed-refresh/no-such-job/promote')).body.error).toMatchObject({ code: 'unknown_job', field: 'jobId' });
  });
});
