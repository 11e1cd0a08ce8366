/**
 * Articles stored before sanitizing existed (sanitizer_version 0, raw HTML as published) are
 * cleaned by the feeds role's leader when it starts, in batches, and served clean afterwards;
 * rows already at the current version are left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANITIZER_VERSION } from '../../src/feeds/sanitize-content.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const OLD = 7;

describe('sanitizing stored articles', () => {
  let server: FeedServer;
  let redis: TestRedis;
  let db: TestDatabase;
  let t: TestPlatform | undefined;

  beforeAll(async () => {
    server = await startFeedServer();
    redis = await startTestRedis();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.stop();
    await redis?.destroy();
    await db?.drop();
    await server?.stop();
  });

  it('cleans what an older version stored, once a leader starts its maintenance, and serves it clean', async () => {
    const env = { FEED_DOMAIN_MIN_INTERVAL_MS: '0', FEED_RECONCILE_INTERVAL_SECONDS: '0', FEED_SANITIZE_BATCH_SIZE: '3' };
    // An API-only platform: a feed, and articles as the code before sanitizing stored them.
    t = await startTestPlatform({ roles: ['api'], redis, db, env });
    const feedUrl = server.url('/blog/doc/rss-no-items.xml');
    const created = await t.api.post('/api/feeds', { url: feedUrl });
    expect(created.status).toBe(201);
    const feedId: number = created.body.id;
    const pool = t.platform.ctx.db.pool;
    const { rows: owner } = await pool.query<{ user_id: number }>('SELECT user_id FROM feeds WHERE id = $1', [feedId]);
    const userId = owner[0]!.user_id;
    for (let i = 0; i < OLD; i++) {
      await pool.query(`INSERT INTO articles (feed_id, user_id, url, title, author, summary, content) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
        feedId,
        userId,
        `${server.url('/blog/old/')}${i}`,
        `<script>alert(${i})</script>Old <b>title</b> &amp; ${i}`,
        '<img src=x onerror=alert(1)>Old Author',
        `<p onclick="alert(1)">summary ${i} <a href="javascript:alert(1)">x</a></p>`,
        `<iframe src="http://evil.example.test/"></iframe><p>body ${i} <a href="../post/${i}">rel</a><img src="pic.png" onerror="alert(1)"></p><script>alert(2)</script>`,
      ]);
    }
    const updatedAt = new Date('2024-01-01T00:00:00Z');
    await pool.query(
      `INSERT INTO articles (feed_id, user_id, url, title, content, sanitizer_version, updated_at) VALUES ($1, $2, $3, 'Current', '<p>already clean</p>', $4, $5)`,
      [feedId, userId, server.url('/blog/current'), SANITIZER_VERSION, updatedAt],
    );
    const before = (await t.api.get(`/api/feeds/${feedId}/articles?limit=50`)).body.articles as any[];
    expect(before.filter((a) => /<script>/.test(a.title ?? ''))).toHaveLength(OLD);
    await t.stop();

    // A platform with the cluster role starts: its leader runs the feeds-sanitize-articles task.
    t = await startTestPlatform({ roles: ['cluster', 'api'], redis, db, env });
    const api = t.api;
    const read = async () => (await api.get(`/api/feeds/${feedId}/articles?limit=50`)).body.articles as any[];
    await waitFor(async () => (await read()).every((a) => !/[<>]/.test(a.title ?? '')), { timeoutMs: 30_000, message: 'stored articles were not sanitized' });

    const after = await read();
    expect(after).toHaveLength(OLD + 1);
    for (let i = 0; i < OLD; i++) {
      const a = after.find((x) => x.url === `${server.url('/blog/old/')}${i}`);
      expect(a).toMatchObject({
        title: `Old title & ${i}`,
        author: 'Old Author',
        summary: `<p>summary ${i} <a rel="nofollow noopener noreferrer">x</a></p>`,
        // Relative URLs resolve against the feed's URL.
        content: `<p>body ${i} <a href="${server.url('/blog/post/')}${i}" rel="nofollow noopener noreferrer">rel</a><img src="${server.url('/blog/doc/pic.png')}" /></p>`,
      });
      expect(Date.parse(a.updatedAt)).toBeGreaterThan(Date.now() - 60_000);
    }
    const current = after.find((x) => x.url === server.url('/blog/current'));
    expect(current).toMatchObject({ title: 'Current', content: '<p>already clean</p>', updatedAt: updatedAt.toISOString() });
    const { rows } = await t.platform.ctx.db.pool.query<{ v: number; n: string }>('SELECT sanitizer_version AS v, count(*) AS n FROM articles GROUP BY 1');
    expect(rows).toEqual([{ v: SANITIZER_VERSION, n: String(OLD + 1) }]);
  });
});
