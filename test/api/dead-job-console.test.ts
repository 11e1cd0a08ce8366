/**
 * The dead-job console and queue controls over REST, as an operator uses them:
 * - GET /api/dead-jobs filters by queue, searches id/name/reason, pages with offset and counts the
 *   total; entries are compact (the stack trace is in the single-job view);
 * - a retry answers where the job is now, without the stack trace;
 * - a replayed job gets its full attempts again; replay and removal by the same filter, in bulk;
 * - POST /api/queues/:name/pause|resume;
 * - due times of delayed jobs come from BullMQ's delayed set (right for a job retried with backoff);
 * - an operator can add a job to a queue, checked against its payload schema (400 naming the
 *   field), except to a chained queue (409); nothing is added on a refusal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('dead-job console and queue controls', () => {
  let t: TestPlatform;
  const workers: PlatformWorker[] = [];
  /** Tasks that fail while listed here. */
  const failing = new Set<string>();
  const runs = new Map<string, number>();

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { JOB_ATTEMPTS: '2', JOB_BACKOFF_MS: '20' } });
    const ctx = t.platform.ctx;
    workers.push(
      createWorker(ctx, 'maintenance', async (job) => {
        runs.set(job.data.task, (runs.get(job.data.task) ?? 0) + 1);
        if (failing.has(job.data.task)) throw new Error(`maintenance task ${job.data.task} broke`);
        return { done: job.data.task };
      }),
      createWorker(ctx, 'poolConsumed', async (job) => {
        if (job.data.groupId >= 900) throw new Error(`pool group ${job.data.groupId} is gone`);
        return { marked: 0 };
      }),
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await t?.stop();
  });

  async function failMaintenance(task: string): Promise<string> {
    failing.add(task);
    const res = await t.api.post('/api/queues/maintenance/jobs', { name: 'nightly', data: { task } });
    expect(res.status).toBe(201);
    await waitFor(async () => (await t.api.get(`/api/tasks/${res.body.id}?queue=maintenance`)).body.state === 'failed', {
      timeoutMs: 20_000,
      message: `${task} to fail`,
    });
    return res.body.id;
  }

  async function failPool(groupId: number): Promise<string> {
    const res = await t.api.post('/api/queues/pool-consumed/jobs', { data: { type: 'titles', groupId } });
    expect(res.status).toBe(201);
    await waitFor(async () => (await t.api.get(`/api/tasks/${res.body.id}?queue=pool-consumed`)).body.state === 'failed', {
      timeoutMs: 20_000,
      message: `group ${groupId} to fail`,
    });
    return res.body.id;
  }

  it('filters dead jobs by queue, searches them, pages them and counts the matches', async () => {
    const m = [await failMaintenance('vacuum-1'), await failMaintenance('vacuum-2'), await failMaintenance('reindex-1')];
    const p = [await failPool(901), await failPool(902)];

    const onlyPools = (await t.api.get('/api/dead-jobs?queue=pool-consumed')).body;
    expect(onlyPools.total).toBe(2);
    expect(onlyPools.jobs.map((j: { id: string }) => j.id).sort()).toEqual([...p].sort());
    expect(onlyPools.jobs.every((j: { queue: string }) => j.queue === 'pool-consumed')).toBe(true);

    // Search: in the failure reason, in the name, in the id.
    const vacuum = (await t.api.get('/api/dead-jobs?q=VACUUM')).body;
    expect(vacuum.total).toBe(2);
    expect(vacuum.jobs.map((j: { id: string }) => j.id).sort()).toEqual([m[0], m[1]].sort());
    expect((await t.api.get('/api/dead-jobs?q=nightly&queue=maintenance')).body.total).toBe(3);
    expect((await t.api.get(`/api/dead-jobs?q=${m[2]}`)).body.jobs.map((j: { id: string }) => j.id)).toEqual([m[2]]);

    // Pages: newest first, total independent of the page.
    const all = (await t.api.get('/api/dead-jobs?limit=100')).body;
    expect(all.total).toBe(5);
    const page = (await t.api.get('/api/dead-jobs?offset=1&limit=2')).body;
    expect(page).toMatchObject({ total: 5, offset: 1, limit: 2 });
    expect(page.jobs.map((j: { id: string }) => j.id)).toEqual(all.jobs.slice(1, 3).map((j: { id: string }) => j.id));
    const finished = all.jobs.map((j: { finishedAt: string }) => j.finishedAt);
    expect([...finished].sort().reverse()).toEqual(finished);

    // Compact entries; the stack trace only in the single-job view.
    expect(all.jobs[0].stacktrace).toBeUndefined();
    expect(all.jobs[0]).toMatchObject({ attemptsMade: 2, attempts: 2 });
    const single = (await t.api.get(`/api/queues/pool-consumed/jobs/${p[0]}`)).body;
    expect(single.stacktrace[0]).toContain('pool group 901 is gone');

    // Bad filters: 400 naming the field.
    expect((await t.api.get('/api/dead-jobs?queue=nope')).body.error).toMatchObject({ field: 'queue' });
    expect((await t.api.get('/api/dead-jobs?offset=-1')).body.error).toMatchObject({ field: 'offset' });
    expect((await t.api.delete('/api/dead-jobs')).body.error).toMatchObject({ field: 'queue' });

    // Removal by the same filter, in bulk.
    const removed = await t.api.delete('/api/dead-jobs?queue=pool-consumed');
    expect(removed.body).toEqual({ removed: 2, skipped: 0 });
    expect((await t.api.get('/api/dead-jobs')).body.total).toBe(3);
  });

  it('replays a dead job with its full attempts, and answers the retry without its stack', async () => {
    const task = 'replay-me';
    const id = await failMaintenance(task);
    expect(runs.get(task)).toBe(2);
    // Still broken: the replay runs both attempts again before the job is dead again.
    const retried = await t.api.post(`/api/queues/maintenance/jobs/${id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id, queue: 'maintenance', attemptsMade: 0, attempts: 2 });
    expect(retried.body.stacktrace).toBeUndefined();
    await waitFor(async () => (await t.api.get(`/api/tasks/${id}?queue=maintenance`)).body.state === 'failed' && runs.get(task) === 4, {
      timeoutMs: 20_000,
      message: 'two more attempts',
    });
    expect((await t.api.get(`/api/tasks/${id}?queue=maintenance`)).body.attemptsMade).toBe(2);
  });

  it('replays every dead job matching a filter', async () => {
    failing.clear();
    const res = await t.api.post('/api/dead-jobs/retry', { queue: 'maintenance', q: 'vacuum' });
    expect(res.body).toEqual({ retried: 2, skipped: 0 });
    await waitFor(async () => (await t.api.get('/api/dead-jobs?queue=maintenance&q=vacuum')).body.total === 0, { timeoutMs: 20_000 });
    expect(runs.get('vacuum-1')).toBe(3);
    // The others stay dead.
    expect((await t.api.get('/api/dead-jobs?queue=maintenance')).body.jobs.map((j: { data: { task: string } }) => j.data.task).sort()).toEqual([
      'reindex-1',
      'replay-me',
    ]);
  });

  it('pauses and resumes a queue', async () => {
    expect((await t.api.post('/api/queues/maintenance/pause')).body).toEqual({ queue: 'maintenance', paused: true });
    expect((await t.api.get('/api/queues')).body.queues.find((q: { name: string }) => q.name === 'maintenance').paused).toBe(true);
    const added = await t.api.post('/api/queues/maintenance/jobs', { data: { task: 'while-paused' } });
    await sleep(500);
    expect((await t.api.get(`/api/tasks/${added.body.id}`)).body.state).not.toBe('completed');
    expect(runs.get('while-paused')).toBeUndefined();
    expect((await t.api.post('/api/queues/maintenance/resume')).body).toEqual({ queue: 'maintenance', paused: false });
    await waitFor(async () => (await t.api.get(`/api/tasks/${added.body.id}`)).body.state === 'completed', { timeoutMs: 20_000 });
    expect((await t.api.post('/api/queues/nope/pause')).status).toBe(404);
  });

  it('shows when a job retried with backoff is due, from the delayed set', async () => {
    const task = 'backoff-check';
    failing.add(task);
    // A backoff of a minute (this platform's default is 20 ms): after its first failure the job
    // waits in the delayed set, due a minute after that failure, not at `timestamp + delay`.
    const before = Date.now();
    const job = await t.platform.ctx.queues.add('maintenance', 'nightly', { task }, { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } });
    await waitFor(async () => (await job.getState()) === 'delayed', { timeoutMs: 20_000, message: 'the retry to wait' });
    const failedBy = Date.now();
    const listed = (await t.api.get('/api/queues/maintenance/jobs?state=delayed')).body.jobs.find((j: { id: string }) => j.id === job.id);
    const due = Date.parse(listed.delayUntil);
    expect(due).toBeGreaterThanOrEqual(before + 60_000);
    expect(due).toBeLessThanOrEqual(failedBy + 60_000);
    expect(Date.parse((await t.api.get(`/api/queues/maintenance/jobs/${job.id}`)).body.delayUntil)).toBe(due);
    await t.api.delete(`/api/queues/maintenance/jobs/${job.id}`);
  });

  it('adds a job by hand, checked against the payload schema; chained queues refuse', async () => {
    const queue = t.platform.ctx.queues.queue('maintenance');
    const before = await queue.count();
    const bad = await t.api.post('/api/queues/maintenance/jobs', { data: { task: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('data.task');
    expect((await t.api.post('/api/queues/maintenance/jobs', { data: { task: 'x' }, priority: -1 })).body.error.field).toBe('priority');
    expect((await t.api.post('/api/queues/maintenance/jobs', { data: { task: 'x' }, delay: 'soon' })).body.error.field).toBe('delay');
    const crawl = await t.api.post('/api/queues/crawl/jobs', { data: { ipId: 1, keyword: 'k', taskId: 't', pagesOnSale: 1, pagesSold: 1 } });
    expect(crawl.status).toBe(409);
    expect(crawl.body.error.message).toMatch(/POST \/api\/ips\/:id\/crawl/);
    expect((await t.api.post('/api/queues/feed-refresh/jobs', { data: { feedId: 1, trigger: 'manual' } })).status).toBe(409);
    expect((await t.api.post('/api/queues/nope/jobs', { data: {} })).status).toBe(404);
    // A drain of a buffer that cannot exist (MESSAGE_PERSIST_SHARDS is at most 256).
    const drain = await t.api.post('/api/queues/message-persist/jobs', { data: { shard: 256 } });
    expect([drain.status, drain.body.error.field]).toEqual([400, 'data.shard']);
    expect(await t.platform.ctx.queues.queue('messagePersist').count()).toBe(0);
    expect(await queue.count()).toBe(before);
    expect(await t.platform.ctx.queues.queue('crawl').count()).toBe(0);

    const delayed = await t.api.post('/api/queues/maintenance/jobs', { name: 'later', data: { task: 'later' }, delay: 30_000 });
    expect(delayed.status).toBe(201);
    expect(delayed.body).toMatchObject({ name: 'later', state: 'delayed', data: { task: 'later' } });
    await t.api.delete(`/api/queues/maintenance/jobs/${delayed.body.id}`);
  });

  it('asks which queue when an id it numbered itself names a job in two queues, and never guesses', async () => {
    // Ids BullMQ numbers itself start at 1 in every queue: add by hand to the queue that is behind
    // until both queues hold a job with the same id.
    const add = async (queue: 'maintenance' | 'pool-consumed') => {
      const res = await t.api.post(
        `/api/queues/${queue}/jobs`,
        queue === 'maintenance' ? { data: { task: 'same-id' } } : { data: { type: 'titles', groupId: 7 } },
      );
      expect(res.status).toBe(201);
      return Number(res.body.id);
    };
    let m = await add('maintenance');
    let p = await add('pool-consumed');
    for (let i = 0; m !== p && i < 500; i++) {
      if (m < p) m = await add('maintenance');
      else p = await add('pool-consumed');
    }
    expect(m).toBe(p);
    const id = String(m);

    const ambiguous = await t.api.get(`/api/tasks/${id}`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error).toMatchObject({ code: 'ambiguous_task', field: 'queue' });
    expect(ambiguous.body.error.message).toMatch(/maintenance/);
    expect(ambiguous.body.error.message).toMatch(/pool-consumed/);

    const inMaintenance = await t.api.get(`/api/tasks/${id}?queue=maintenance`);
    expect(inMaintenance.status).toBe(200);
    expect(inMaintenance.body).toMatchObject({ task_id: id, queue: 'maintenance' });
    const inPools = await t.api.get(`/api/tasks/${id}?queue=pool-consumed`);
    expect(inPools.body).toMatchObject({ task_id: id, queue: 'pool-consumed' });

    const unknown = await t.api.get(`/api/tasks/${id}?queue=nope`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.field).toBe('queue');
    expect((await t.api.get(`/api/tasks/${id}?queue=maintenance&extra=1`)).body.error.field).toBe('extra');
  });
});
