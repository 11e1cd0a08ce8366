/**
 * The domain spacing applies to every host a refresh actually requests: a redirect to another
 * host waits for that host's turn. Two loopback hosts act as two domains (127.0.0.2 and
 * 127.0.0.3, opened by the tests' OUTBOUND_ALLOW); half the feeds live on B, the other half on A
 * and redirect to B, and all are refreshed at once.
 *
 * Before redirects took the new host's turn, B's requests from the redirects went out in A's
 * turns, alongside B's own, and came closer together than the interval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitForTask } from './support.js';

const INTERVAL_MS = 400;
const A = '127.0.0.2';
const B = '127.0.0.3';

describe('domain spacing across redirects', () => {
  let t: TestPlatform;
  let server: FeedServer;

  beforeAll(async () => {
    server = await startFeedServer({ hosts: [A, B] });
    t = await startTestPlatform({
      roles: ['feeds', 'api'],
      env: { FEED_DOMAIN_MIN_INTERVAL_MS: String(INTERVAL_MS), FEED_WORKER_CONCURRENCY: '10', FEED_RECONCILE_INTERVAL_SECONDS: '0' },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await server?.stop();
  });

  it('a redirect to another host waits for that host’s turn: requests to each host stay an interval apart', async () => {
    const urls = Array.from({ length: 5 }, (_, i) => [
      server.url(`/to?url=${encodeURIComponent(server.url(`/rss/hop-${i}.xml?items=2`, B))}`, A),
      server.url(`/rss/direct-${i}.xml?items=2`, B),
    ]).flat();
    const created = await Promise.all(urls.map((url) => t.api.post('/api/feeds', { url })));
    expect(created.map((r) => r.status)).toEqual(Array(urls.length).fill(201));
    const tasks = await Promise.all(created.map((r) => waitForTask(t.api, r.body.taskId, 60_000)));
    expect(tasks.map((task) => task.result?.outcome)).toEqual(Array(urls.length).fill('refreshed'));

    const requests = server.requests.filter((r) => r.path === '/to' || r.path.startsWith('/rss/hop-') || r.path.startsWith('/rss/direct-'));
    for (const [host, count] of [
      [A, 5],
      [B, 10],
    ] as const) {
      const at = requests
        .filter((r) => r.host === host)
        .map((r) => r.at)
        .sort((x, y) => x - y);
      expect(at).toHaveLength(count);
      const gaps = at.slice(1).map((time, i) => time - at[i]!);
      expect(Math.min(...gaps), `gaps at ${host}: ${gaps.map((g) => g.toFixed(1)).join(', ')}`).toBeGreaterThanOrEqual(INTERVAL_MS);
    }
  });
});
