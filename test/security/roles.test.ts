/**
 * Finding 4: `isAdmin` was never checked: a non-admin user could list and retry every queue's
 * jobs, read other users' message sessions, open Bull Board, and delete another user's feed
 * refresh job by id. Now every route declares who may call it (public, user, admin), admins run
 * the platform, and a user sees only its own feeds, tasks and sessions (others answer 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlainUser } from '../support/accounts.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('roles and ownership', () => {
  let t: TestPlatform;
  let user: ApiClient;
  let feedTask: string;
  let feedId: number;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    user = await createPlainUser(t, 'mallory');
    // The admin's feed: its first refresh waits in the queue (no feeds worker runs here, nothing is fetched).
    const feed = await t.api.post('/api/feeds', { url: 'https://feeds.example.com/admin.xml' });
    expect(feed.status).toBe(201);
    feedTask = feed.body.taskId;
    feedId = feed.body.id;
    expect((await t.api.post('/api/sessions/admin-notes/messages', { role: 'user', content: "the admin's secret" })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  it('refuses a user the queues, jobs, dead jobs and Bull Board, and deletes nothing', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/queues'],
      ['GET', '/api/queues/feed-refresh/jobs?state=waiting'],
      ['GET', `/api/queues/feed-refresh/jobs/${feedTask}`],
      ['POST', `/api/queues/feed-refresh/jobs/${feedTask}/retry`],
      ['POST', '/api/queues/feed-refresh/retry-failed'],
      ['DELETE', `/api/queues/feed-refresh/jobs/${feedTask}`],
      ['GET', '/api/dead-jobs'],
      ['GET', '/api/cluster'],
      ['GET', '/api/users'],
      ['GET', '/admin/queues/api/queues'],
      ['POST', '/api/queues/maintenance/jobs', { data: { task: 'by-a-user' } }],
      ['POST', '/api/queues/maintenance/pause'],
      ['POST', '/api/queues/maintenance/resume'],
      ['POST', '/api/dead-jobs/retry', {}],
      ['DELETE', '/api/dead-jobs?queue=feed-refresh'],
    ] as [string, string, unknown?][]) {
      const res = await user.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code, `${method} ${path}`).toBe('forbidden');
    }
    expect(await t.platform.ctx.queues.queue('feedRefresh').getJob(feedTask)).toBeTruthy();
    expect(await t.platform.ctx.queues.queue('maintenance').isPaused()).toBe(false);
    // The role is checked before the body is read: a user's body to an admin route is never parsed.
    const unread = await user.request('POST', '/api/queues/maintenance/jobs', '{"not json', { 'content-type': 'application/json' });
    expect(unread.status).toBe(403);
    expect((await t.platform.ctx.queues.queue('maintenance').getJobs()).filter((j) => j.data.task === 'by-a-user')).toEqual([]);
    // The board's page too, for a browser; and its sign-in form gives a user no session cookie.
    expect((await user.get('/admin/queues', { accept: 'text/html' })).status).toBe(403);
    const signIn = await user
      .withToken(undefined)
      .request('POST', '/admin/login', 'username=mallory&password=pw-mallory-0123', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(signIn.status).toBe(403);
    expect(signIn.headers.get('set-cookie')).toBeNull();
  });

  it("hides another user's feed, its task and its session (404), and writes nothing to the session", async () => {
    expect((await user.get(`/api/feeds/${feedId}`)).status).toBe(404);
    expect((await user.delete(`/api/feeds/${feedId}`)).status).toBe(404);
    expect((await user.get(`/api/tasks/${feedTask}`)).status).toBe(404);
    expect((await user.get(`/api/tasks/${feedTask}?queue=feed-refresh`)).status).toBe(404);
    const read = await user.get('/api/sessions/admin-notes/messages');
    expect(read.status).toBe(404);
    expect(JSON.stringify(read.body)).not.toContain('secret');
    expect((await user.post('/api/sessions/admin-notes/messages', { role: 'user', content: 'injected' })).status).toBe(404);
    const cached = await t.platform.ctx.redis.lrange(t.platform.ctx.keys.sessionMessages('admin-notes'), 0, -1);
    expect(cached.join()).not.toContain('injected');
    // The admin still reads its own session.
    const own = await t.api.get('/api/sessions/admin-notes/messages');
    expect(own.body.messages.map((m: { content: string }) => m.content)).toEqual(["the admin's secret"]);
  });

  it('gives a user its own feeds, tasks and sessions, pool pops and IP reads', async () => {
    const feed = await user.post('/api/feeds', { url: 'https://feeds.example.com/mallory.xml' });
    expect(feed.status).toBe(201);
    expect((await user.get(`/api/tasks/${feed.body.taskId}`)).status).toBe(200);
    expect((await user.get('/api/feeds')).body.feeds.map((f: { id: number }) => f.id)).toEqual([feed.body.id]);
    expect((await user.post('/api/sessions/mallory-chat/messages', { role: 'user', content: 'mine' })).status).toBe(201);
    expect((await user.get('/api/sessions/mallory-chat/messages')).body.messages).toHaveLength(1);
    // The admin does not see it either: sessions belong to their writer.
    expect((await t.api.get('/api/sessions/mallory-chat/messages')).status).toBe(404);
    expect((await user.post('/api/pools/titles/1/pop')).status).toBe(404); // pool_empty: allowed, nothing to pop
    expect((await user.get('/api/ips')).status).toBe(200);
    expect((await user.get('/api/leaderboard')).status).toBe(200);
  });

  it('answers 403 to a user on every admin route of the OpenAPI document, and 200-or-4xx-but-never-403 on every user route', async () => {
    const doc = (await user.get('/api/openapi.json')).body;
    const sample: Record<string, string> = {
      id: '1',
      name: 'maintenance',
      type: 'titles',
      groupId: '1',
      sessionId: 'mallory-chat',
      task_id: 'x',
      messageId: 'x',
    };
    let admin = 0;
    for (const [path, ops] of Object.entries<Record<string, { 'x-access': string }>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (path === '/api/auth/logout') continue; // would end this user's token
        const url = path.replace(/\{(\w+)\}/g, (_, p: string) => sample[p] ?? 'x');
        const res = await user.request(method.toUpperCase(), url, method === 'get' || method === 'delete' ? undefined : {});
        if (op['x-access'] === 'admin') {
          admin++;
          expect(res.status, `${method} ${path}`).toBe(403);
        } else {
          expect(res.status, `${method} ${path}`).not.toBe(403);
          expect(res.status, `${method} ${path}`).toBeLessThan(500);
        }
      }
    }
    expect(admin).toBeGreaterThan(15);
  });
});
