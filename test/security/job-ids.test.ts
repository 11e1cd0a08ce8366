/**
 * Finding 7: job ids in routes named BullMQ's own keys: DELETE /api/queues/feed-refresh/jobs/meta
 * deleted the queue's meta hash (and unpaused it); GET .../jobs/events and /api/tasks/events
 * answered 500. Now only a key that holds a job is a job: anything else answers 404 and is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe("job ids that name BullMQ's own keys", () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    expect((await t.api.post('/api/feeds', { url: 'https://feeds.example.com/jobs.xml' })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  it('answers 404 for every such id on every job route, and leaves the queue (paused) as it was', async () => {
    const queue = t.platform.ctx.queues.queue('feedRefresh');
    await queue.pause();
    const job = (await queue.getJobs(['waiting', 'delayed', 'prioritized']))[0]!;
    const names = [
      'meta',
      'events',
      'id',
      'wait',
      'paused',
      'delayed',
      'prioritized',
      'repeat',
      'marker',
      'pc',
      'de',
      'stalled-check',
      `${job.id}:lock`,
      `${job.id}:logs`,
      `${job.id}:processed`,
    ];
    const keysBefore = (await t.platform.ctx.redis.keys(`${t.platform.ctx.keys.bullPrefix}:feed-refresh:*`)).sort();
    for (const id of names) {
      for (const [method, path] of [
        ['GET', `/api/queues/feed-refresh/jobs/${encodeURIComponent(id)}`],
        ['POST', `/api/queues/feed-refresh/jobs/${encodeURIComponent(id)}/retry`],
        ['DELETE', `/api/queues/feed-refresh/jobs/${encodeURIComponent(id)}`],
        ['GET', `/api/tasks/${encodeURIComponent(id)}`],
      ] as const) {
        const res = await t.api.request(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    expect(await queue.isPaused()).toBe(true);
    expect((await t.platform.ctx.redis.keys(`${t.platform.ctx.keys.bullPrefix}:feed-refresh:*`)).sort()).toEqual(keysBefore);
    // A real job is still found.
    expect((await t.api.get(`/api/queues/feed-refresh/jobs/${job.id}`)).status).toBe(200);
    await queue.resume();
  });
});
