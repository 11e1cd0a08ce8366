/**
 * Jobs and dead jobs over the REST API: a job that fails 3 times appears in /api/dead-jobs with
 * its reason, attempts and data (its stack in the single-job view); retry through the API completes it; delete removes it;
 * bad input (unknown queue or job, bad ranges, bodies) gets a 4xx naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const SCRAPE_TOKEN = 'prometheus-scrape-token-0123456789abcdef';

describe('jobs and dead jobs API', () => {
  let t: TestPlatform;
  let worker: PlatformWorker;
  let healed = false;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { JOB_BACKOFF_MS: '20', METRICS_TOKEN: SCRAPE_TOKEN } });
    const ctx = t.platform.ctx;
    worker = createWorker(ctx, 'maintenance', async (job) => {
      if (job.data.task.startsWith('fail') && !healed) throw new Error(`cannot do ${job.data.task}`);
      return { done: job.data.task };
    });
  });
  afterAll(async () => {
    await worker?.close();
    await t?.stop();
  });

  async function deadJob(task: string) {
    const job = await t.platform.ctx.queues.add('maintenance', 'job', { task });
    await waitFor(async () => (await job.getState()) === 'failed', { timeoutMs: 20_000, message: `${task} never failed` });
    return job.id!;
  }

  it('lists every queue with counts by state', async () => {
    const res = await t.api.get('/api/queues');
    expect(res.status).toBe(200);
    const names = res.body.queues.map((q: { name: string }) => q.name);
    expect(names).toEqual(expect.arrayContaining(['feed-refresh', 'crawl', 'crawl-result', 'pool-refill', 'pool-consumed', 'message-persist', 'maintenance']));
    expect(res.body.queues[0].counts).toMatchObject({ waiting: expect.any(Number), failed: expect.any(Number), delayed: expect.any(Number) });
  });

  it('shows a job that failed 3 times as a dead job, retries it to completion, deletes another', async () => {
    const id = await deadJob('fail-once-more');
    const dead = await t.api.get('/api/dead-jobs');
    expect(dead.status).toBe(200);
    const entry = dead.body.jobs.find((j: { id: string }) => j.id === id);
    expect(entry).toMatchObject({
      queue: 'maintenance',
      attemptsMade: 3,
      attempts: 3,
      failedReason: 'cannot do fail-once-more',
      data: { task: 'fail-once-more' },
    });
    // Compact in the console; the stack trace is in the single-job view.
    expect(entry.stacktrace).toBeUndefined();
    expect((await t.api.get(`/api/queues/maintenance/jobs/${id}`)).body.stacktrace[0]).toContain('cannot do fail-once-more');

    const listed = await t.api.get('/api/queues/maintenance/jobs?state=failed');
    expect(listed.body.jobs.map((j: { id: string }) => j.id)).toContain(id);

    healed = true;
    const retried = await t.api.post(`/api/queues/maintenance/jobs/${id}/retry`);
    expect(retried.status).toBe(200);
    await waitFor(async () => (await t.api.get(`/api/tasks/${id}?queue=maintenance`)).body.state === 'completed', { timeoutMs: 20_000 });
    const task = await t.api.get(`/api/tasks/${id}?queue=maintenance`);
    expect(task.body).toMatchObject({ task_id: id, queue: 'maintenance', state: 'completed', result: { done: 'fail-once-more' } });
    expect((await t.api.get('/api/dead-jobs')).body.jobs.map((j: { id: string }) => j.id)).not.toContain(id);

    healed = false;
    const other = await deadJob('fail-and-go');
    expect((await t.api.delete(`/api/queues/maintenance/jobs/${other}`)).status).toBe(204);
    expect((await t.api.get(`/api/queues/maintenance/jobs/${other}`)).status).toBe(404);
    expect((await t.api.get('/api/dead-jobs')).body.jobs.map((j: { id: string }) => j.id)).not.toContain(other);
  });

  it('retries every failed job of a queue', async () => {
    healed = false;
    const ids = [await deadJob('fail-a'), await deadJob('fail-b')];
    healed = true;
    const res = await t.api.post('/api/queues/maintenance/retry-failed');
    expect(res.status).toBe(200);
    expect(res.body.retried).toBeGreaterThanOrEqual(2);
    for (const id of ids) await waitFor(async () => (await t.api.get(`/api/tasks/${id}?queue=maintenance`)).body.state === 'completed', { timeoutMs: 20_000 });
  });

  it('answers bad input with a 4xx naming the field and changes nothing', async () => {
    const before = (await t.api.get('/api/queues')).body;
    const cases: [string, string, number, string][] = [
      ['GET', '/api/queues/nope/jobs', 404, 'name'],
      ['GET', '/api/queues/maintenance/jobs?state=sleeping', 400, 'state'],
      ['GET', '/api/queues/maintenance/jobs?start=-1', 400, 'start'],
      ['GET', '/api/queues/maintenance/jobs?start=10&end=2', 400, 'end'],
      ['GET', '/api/queues/maintenance/jobs?start=abc', 400, 'start'],
      ['POST', '/api/queues/nope/jobs/1/retry', 404, 'name'],
      ['POST', '/api/queues/maintenance/jobs/does-not-exist/retry', 404, 'id'],
      ['DELETE', '/api/queues/maintenance/jobs/does-not-exist', 404, 'id'],
      ['DELETE', '/api/queues/nope/jobs/1', 404, 'name'],
      ['POST', '/api/queues/nope/retry-failed', 404, 'name'],
      ['GET', '/api/dead-jobs?limit=0', 400, 'limit'],
      ['GET', '/api/dead-jobs?limit=many', 400, 'limit'],
      ['GET', '/api/tasks/no-such-task', 404, 'task_id'],
    ];
    for (const [method, path, status, field] of cases) {
      const res = await t.api.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.body.error.field, `${method} ${path}`).toBe(field);
      expect(typeof res.body.error.code).toBe('string');
    }
    const big = await t.api.post('/api/auth/login', { username: 'x', password: 'y'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ code: 'body_too_large', field: '(body)' });
    const unknownRoute = await t.api.get('/api/nothing-here');
    expect(unknownRoute.status).toBe(404);
    expect((await t.api.get('/api/queues')).body).toEqual(before);
  });

  it('serves an OpenAPI document that covers the routes', async () => {
    const res = await t.api.get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/api/auth/login', '/api/queues/{name}/jobs/{id}/retry', '/api/dead-jobs', '/api/tasks/{task_id}']),
    );
    const login = res.body.paths['/api/auth/login'].post;
    expect(login.security).toEqual([]);
    expect(login.requestBody.content['application/json'].schema.required).toEqual(['username', 'password']);
    expect(res.body.paths['/api/queues/{name}/jobs'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['name', 'state', 'start', 'end']);
  });

  it('exports queue counts and dependency health as Prometheus metrics, to a scrape token or a user token only', async () => {
    expect((await t.api.withToken(undefined).get('/metrics')).status).toBe(401);
    expect((await t.api.withToken('not-the-scrape-token-0123456789abcdef').get('/metrics')).status).toBe(401);
    expect((await t.api.get('/metrics')).status).toBe(200);
    const res = await t.api.withToken(SCRAPE_TOKEN).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/wp_queue_jobs\{queue="maintenance",state="completed"\} \d+/);
    expect(res.body).toMatch(/wp_dependency_up\{dependency="redis"\} 1/);
    expect(res.body).toMatch(/wp_dependency_up\{dependency="database"\} 1/);
    expect(res.body).toMatch(/wp_http_requests_total\{method="GET",route="\/api\/queues",status="200"\} \d+/);
  });

  it("gives every answer a request id (the caller's when it is sane), and answers 405 with Allow for a known path and another method", async () => {
    const answers = [
      await t.api.get('/api/queues'),
      await t.api.get('/healthz'),
      await t.api.get('/api/no-such-route'),
      await t.api.request('PUT', '/api/queues'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 405]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[\w.-]{1,128}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const wrongMethod = answers[3]!;
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
    expect(wrongMethod.body.error.code).toBe('method_not_allowed');
    expect((await t.api.get('/api/queues', { 'x-request-id': 'caller-chosen.id-1' })).headers.get('x-request-id')).toBe('caller-chosen.id-1');
    expect((await t.api.get('/api/queues', { 'x-request-id': 'no spaces or <tags>' })).headers.get('x-request-id')).not.toBe('no spaces or <tags>');
    const metrics = await t.api.withToken(SCRAPE_TOKEN).get('/metrics');
    expect(metrics.body).toMatch(/wp_http_requests_total\{method="PUT",route="\/api\/queues",status="405"\} 1\b/);
    expect(metrics.body).toMatch(/wp_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
  });
});
