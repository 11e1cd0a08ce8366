/**
 * The proxy circuit breaker with real proxies (local forwarding proxies started here) and real
 * Chromium: the fixture marketplace blocks the first proxy's address; after 10 consecutive
 * blocked pages the breaker health-checks the next proxies (the second is down, the third is
 * healthy), switches to the third and starts the 30-minute cool-down; the crawl then
 * completes through it. During the cool-down more blocks do not switch again. The state lives
 * in Redis, so every crawler process follows the switch.
 */
import type { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging/logger.js';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { ProxyBreaker } from '../../src/crawl/proxy-breaker.js';
import { checkProxy } from '../../src/crawl/proxy-health-check.js';
import { parseProxy } from '../../src/crawl/proxy-url.js';
import { freePort } from '../../src/services/free-port.js';
import { startForwardProxy, type ForwardProxy } from '../fixtures/crawl/forward-proxy.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('proxy circuit breaker', () => {
  let market: FixtureMarketplace;
  let proxyA: ForwardProxy;
  let proxyB: ForwardProxy;
  let deadProxy: string;
  let proxyList: string[];
  let t: TestPlatform;
  let crawl: Queue;

  const searches = (p: ForwardProxy, keyword: string) => p.forwarded.filter((path) => path.startsWith('/search') && path.includes(`keyword=${keyword}`)).length;
  const breakerHash = () => t.platform.ctx.redis.hgetall(t.platform.ctx.keys.proxyBreaker());
  const counter = async (name: string, labels: Record<string, string> = {}) => {
    const { values } = await t.platform.ctx.metrics.registry.getSingleMetric(name)!.get();
    return values.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val)).reduce((sum, v) => sum + v.value, 0);
  };

  async function crawlOnce(keyword: string): Promise<Job> {
    const task = { ipId: 3, keyword, taskId: `proxy-${keyword}`, pagesOnSale: 1, pagesSold: 1 };
    const job = await t.platform.ctx.queues.add('crawl', 'crawl', task, { jobId: `crawl-${task.taskId}` });
    const done = await waitFor(
      async () => {
        const j = await crawl.getJob(job.id!);
        return j?.finishedOn ? j : null;
      },
      { timeoutMs: 150_000, intervalMs: 200, message: `crawl ${keyword} did not finish` },
    );
    return done!;
  }

  beforeAll(async () => {
    market = await FixtureMarketplace.start({ itemsPerPage: 120, pages: 5 });
    proxyA = await startForwardProxy('10.0.0.1');
    proxyB = await startForwardProxy('10.0.0.2');
    deadProxy = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    proxyList = [proxyA.url, deadProxy, proxyB.url];
    t = await startTestPlatform({
      roles: ['crawler'],
      env: {
        CRAWL_SITE: 'fixture',
        CRAWL_BASE_URL: market.url,
        PROXY_LIST: proxyList.join(','),
        PROXY_HEALTH_CHECK_TIMEOUT_MS: '3000',
        CRAWLER_BLOCKED_RETRY_DELAY_MS: '100',
        CRAWLER_CONCURRENCY: '1',
        CRAWLER_SCROLL_DELAY_MS: '2000',
        CRAWLER_NETWORK_IDLE_MS: '100',
        CRAWLER_HUMANIZE: 'false',
      },
    });
    crawl = t.platform.ctx.queues.queue('crawl');
  });
  afterAll(async () => {
    await t?.stop();
    await proxyA?.stop();
    await proxyB?.stop();
    await market?.stop();
  });

  it('10 consecutive blocks health-check the next proxies, switch to the first healthy one and start the cool-down', async () => {
    market.behaviour.set([{ mode: 'forbidden', match: { clientIp: proxyA.egress } }]);
    const done = await crawlOnce('switch');

    expect(await done.getState()).toBe('completed');
    expect(done.returnvalue).toMatchObject({ totalFound: 240, pagesCrawled: 2, errors: [] });
    const seen = market.requests().search.filter((r) => r.keyword === 'switch');
    expect(seen.map((r) => `${r.clientIp} ${r.mode}`)).toEqual([
      ...Array.from({ length: 10 }, () => '10.0.0.1 forbidden'),
      '10.0.0.2 normal',
      '10.0.0.2 normal',
    ]);
    expect(searches(proxyA, 'switch')).toBe(10);
    expect(searches(proxyB, 'switch')).toBe(2);
    expect(proxyB.forwarded).toContain('/'); // its health check

    const state = await breakerHash();
    expect(state).toMatchObject({ index: '2', failures: '0', switches: '1' });
    expect(Number(state.cooldownUntil) - Number(state.switchedAt)).toBe(30 * 60_000);
    expect(await counter('wp_crawler_proxy_switches_total')).toBe(1);
    expect(await counter('wp_crawler_browser_launches_total', { reason: 'proxy' })).toBe(1);
  }, 180_000);

  it('does not switch again during the cool-down, however many blocks follow', async () => {
    market.behaviour.set([{ mode: 'forbidden', match: { clientIp: proxyB.egress }, times: 12 }]);
    const done = await crawlOnce('cooldown');

    expect(await done.getState()).toBe('completed');
    const seen = market.requests().search.filter((r) => r.keyword === 'cooldown');
    expect(seen.filter((r) => r.mode === 'forbidden')).toHaveLength(12);
    expect(seen.every((r) => r.clientIp === proxyB.egress)).toBe(true);
    expect(searches(proxyA, 'cooldown')).toBe(0);
    expect(await breakerHash()).toMatchObject({ index: '2', switches: '1', failures: '0' });
  }, 180_000);

  it('every crawler process follows the state in Redis; health checks tell live proxies from dead ones', async () => {
    const proxies = proxyList.map(parseProxy);
    const healthCheck = (p: ReturnType<typeof parseProxy>) => checkProxy(p, `${market.url}/`, 3000);
    const otherProcess = new ProxyBreaker({
      redis: t.platform.ctx.redis,
      key: t.platform.ctx.keys.proxyBreaker(),
      proxies,
      threshold: 10,
      cooldownMs: 30 * 60_000,
      healthCheckTimeoutMs: 3000,
      healthCheck,
      logger: silentLogger(),
    });
    expect((await otherProcess.current())?.server).toBe(proxyB.url);

    expect(await healthCheck(proxies[0]!)).toMatchObject({ healthy: true });
    expect(await healthCheck(proxies[1]!)).toMatchObject({ healthy: false });
    expect(await healthCheck(proxies[2]!)).toMatchObject({ healthy: true });
  });

  it('one process health-checks when several trip the breaker at once; with no healthy proxy it stays and waits before checking again', async () => {
    const proxies = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'].map(parseProxy);
    const checked: string[] = [];
    const make = () =>
      new ProxyBreaker({
        redis: t.platform.ctx.redis,
        key: `${t.platform.ctx.keys.proxyBreaker()}:isolated-test`,
        proxies,
        threshold: 3,
        cooldownMs: 60_000,
        healthCheckTimeoutMs: 100,
        healthCheck: async (p) => {
          checked.push(p.server);
          return { healthy: false, detail: 'down' };
        },
        logger: silentLogger(),
      });
    const [one, two] = [make(), make()];
    await one.recordFailure();
    await two.recordFailure();
    const results = await Promise.all([one.recordFailure(), two.recordFailure()]); // 3rd and 4th: both over the threshold
    expect(results.map((r) => r.failures).sort()).toEqual([3, 4]);
    expect(checked).toEqual(['http://127.0.0.1:2', 'http://127.0.0.1:3']); // one sweep, in list order
    expect((await one.current())?.server).toBe('http://127.0.0.1:1'); // nothing healthy: stays
    await two.recordFailure();
    expect(checked).toHaveLength(2); // no new sweep right away
    await one.recordSuccess();
    expect((await one.state()).failures).toBe(0);
  });
});
