/**
 * A fleet on one machine as a user runs it: `npm start`, then `npm run start:role -- feeds` and
 * `npm run start:role -- crawler` in other terminals (same DATA_DIR: they attach). Each process
 * serves /healthz, /readyz (probing what its roles need) and /metrics (its roles' series, behind
 * the admin's token or METRICS_TOKEN) on its own port, and nothing else: /api is 404 there. The
 * feeds process is given the API's PORT, as a copied .env would: it takes another free port and
 * prints it; the crawler is given PORT=0. The leader counts them (wp_cluster_instances,
 * wp_queue_workers).
 *
 * And the two stumbles of running a fleet by hand, each shown as a user meets it:
 * - a process started without the OUTBOUND_ALLOW the others have says so at start, naming the
 *   setting, and GET /api/cluster and the leader's metrics show the disagreement;
 * - `start:role` with another DATA_DIR while `npm start` runs from this checkout warns, before
 *   starting a second platform, naming both DATA_DIRs and how to join.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

/** What every process of the fleet is given, as one .env would give it. */
const FLEET = { OUTBOUND_ALLOW: '127.0.0.1', METRICS_TOKEN: 'e2e-fleet-scrape-token-0123456789abcdef', WORKER_SHUTDOWN_GRACE_MS: '5000' };

describe('a fleet of processes on one machine, seen as one', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-fleet-'));
  const otherDataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-fleet-other-'));
  const expectations = new Expectations();
  const started: ProductProcess[] = [];
  let port: number;
  let owner: ProductProcess;
  let api: ApiClient;

  beforeAll(async () => {
    port = await freePort();
    owner = await startProduct({ dataDir, port, env: FLEET });
    started.push(owner);
    api = await adminClient(owner.url!);
  });
  afterAll(async () => {
    for (const p of started.reverse()) await p.stop();
    await removeDataDir(dataDir);
    await removeDataDir(otherDataDir);
  });

  const metricsOf = async (url: string) => {
    const res = await new ApiClient(url, FLEET.METRICS_TOKEN).get('/metrics');
    expect(res.status).toBe(200);
    return res.body as string;
  };
  const families = (text: string) => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map(([, n]) => n!));
  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('serves health, readiness and its roles’ metrics from every process, on its own port, and nothing else there', async () => {
    // Given the API's port (a .env copied for both terminals): it takes another one and says where.
    const feeds = await startProduct({ dataDir, port, command: ['start:role', 'feeds'], env: FLEET });
    started.push(feeds);
    const crawler = await startProduct({ dataDir, port: 0, command: ['start:role', 'crawler'], env: FLEET });
    started.push(crawler);
    expect(feeds.output()).toContain(`PORT ${port} is in use`);
    for (const p of [feeds, crawler]) {
      expect(p.output()).toContain('attached to the embedded services of a running platform process');
      expect(p.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(p.httpUrl).not.toBe(owner.url);
    }
    expect(new Set([owner.url, feeds.httpUrl, crawler.httpUrl]).size).toBe(3);

    for (const [p, dependencies] of [
      [feeds, { redis: 'up', database: 'up' }],
      // The crawler's work never touches the database: its readiness does not either.
      [crawler, { redis: 'up' }],
    ] as const) {
      const client = new ApiClient(p.httpUrl);
      expect((await client.get('/healthz')).body).toEqual({ status: 'ok' });
      const ready = await client.get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', dependencies });
      // Metrics are guarded as on the API: no token, 401; the admin's token or METRICS_TOKEN, 200.
      expect((await client.get('/metrics')).status).toBe(401);
      expect((await client.withToken(api.token).get('/metrics')).status).toBe(200);
      // Nothing else: no API, no OpenAPI document, no Bull Board, no login.
      for (const route of ['/api/feeds', '/api/openapi.json', '/admin/queues', '/api/queues']) {
        const res = await client.withToken(api.token).get(route);
        expect(res.status, route).toBe(404);
        expect(res.body.error.code, route).toBe('not_found');
      }
      expect((await client.post('/api/auth/login', { username: 'admin', password: 'change-me' })).status).toBe(404);
    }
    // The owner's readiness also shows the embedded services it runs.
    expect((await api.get('/readyz')).body.dependencies).toEqual({
      redis: 'up',
      database: 'up',
      'embedded-redis': 'up',
      'embedded-postgres': 'up',
    });

    // Each exports its roles' series.
    const feedsMetrics = families(await metricsOf(feeds.httpUrl));
    const crawlerMetrics = families(await metricsOf(crawler.httpUrl));
    expect(feedsMetrics).toContain('wp_feed_refreshes_total');
    expect(feedsMetrics).toContain('wp_feed_articles_upserted_total');
    expect([...feedsMetrics].filter((n) => n.startsWith('wp_crawler_'))).toEqual([]);
    for (const name of ['wp_crawler_pages_total', 'wp_crawler_page_duration_seconds', 'wp_crawler_browsers', 'wp_crawler_proxy_consecutive_failures']) {
      expect(crawlerMetrics).toContain(name);
    }
    expect([...crawlerMetrics].filter((n) => n.startsWith('wp_feed_'))).toEqual([]);
    for (const m of [feedsMetrics, crawlerMetrics]) {
      expect(m).toContain('wp_jobs_completed_total');
      expect(m).toContain('wp_dependency_up');
      // Only the owner of the embedded services exports their state.
      expect(m).not.toContain('wp_embedded_service_restarts_total');
    }

    // The leader (npm start holds the cluster lease) counts the fleet: two processes of each of
    // the feeds and crawler roles, and two BullMQ workers on each of their queues.
    const fleet = await waitFor(
      async () => {
        const text = await metricsOf(owner.url!);
        return sample(text, 'wp_cluster_instances{role="feeds"}') === 2 && sample(text, 'wp_cluster_instances{role="crawler"}') === 2 ? text : undefined;
      },
      { timeoutMs: 30_000, message: 'the leader counting both processes' },
    );
    expect(sample(fleet, 'wp_cluster_instances{role="api"}')).toBe(1);
    expect(sample(fleet, 'wp_queue_workers{queue="feed-refresh"}')).toBe(2);
    expect(sample(fleet, 'wp_queue_workers{queue="crawl"}')).toBe(2);
    expect(sample(fleet, 'wp_queue_workers{queue="crawl-result"}')).toBe(1);
    expect(sample(fleet, 'wp_cluster_settings_variants{setting="OUTBOUND_ALLOW"}')).toBe(1);
    expect(sample(fleet, 'wp_embedded_service_restarts_total{service="redis"}')).toBe(0);
    // Only the leader exports the fleet's view: the sums over the fleet count each process once.
    expect(families(await metricsOf(feeds.httpUrl))).not.toContain('wp_cluster_instances');

    // Stopped, a worker-only process is gone from the leader's count and its port is closed.
    expect((await crawler.stop()).clean).toBe(true);
    await waitFor(async () => sample(await metricsOf(owner.url!), 'wp_cluster_instances{role="crawler"}') === 1, {
      timeoutMs: 30_000,
      message: 'the crawler process leaving the count',
    });
    await expect(fetch(`${crawler.httpUrl}/healthz`)).rejects.toThrow();
  }, 240_000);

  it('says at start, naming the setting, when a process does not share the fleet’s OUTBOUND_ALLOW', async () => {
    const { OUTBOUND_ALLOW: _, ...withoutAllow } = FLEET;
    const stray = await startProduct({ dataDir, port: 0, command: ['start:role', 'feeds'], env: withoutAllow });
    started.push(stray);
    expectations.expectError(/^OUTBOUND_ALLOW differs from the value of the running instance/);
    const strayId = /instance (\S+); attached/.exec(stray.output())![1]!;
    const ownerId = /instance (\S+)\)/.exec(owner.output())![1]!;
    const error = await waitFor(() => stray.lines().find((l) => l.level === 50 && l.setting === 'OUTBOUND_ALLOW'), {
      timeoutMs: 10_000,
      message: 'the error naming OUTBOUND_ALLOW',
    });
    expect(error.msg).toContain(ownerId);
    expect(error.msg).toContain('give every process the same OUTBOUND_ALLOW');

    // The cluster view lists who runs with which value; the leader's metric counts the values.
    const cluster = await waitFor(
      async () => {
        const body = (await api.get('/api/cluster')).body;
        return body.instances.some((i: { id: string }) => i.id === strayId) ? body : undefined;
      },
      { timeoutMs: 30_000, message: 'the stray process registered' },
    );
    const disagreement = cluster.settingsDisagreements.find((d: { setting: string }) => d.setting === 'OUTBOUND_ALLOW');
    expect(disagreement.variants).toHaveLength(2);
    expect(disagreement.variants.find((v: { instances: string[] }) => v.instances.includes(strayId)).instances).toEqual([strayId]);
    expect(disagreement.variants.find((v: { instances: string[] }) => v.instances.includes(ownerId))).toBeDefined();
    expect(sample(await metricsOf(owner.url!), 'wp_cluster_settings_variants{setting="OUTBOUND_ALLOW"}')).toBe(2);
    // Only the setting that differs (the crawlers' CRAWL_SITE and CRAWL_BASE_URL agree).
    expect(cluster.settingsDisagreements.map((d: { setting: string }) => d.setting)).toEqual(['OUTBOUND_ALLOW']);

    expect((await stray.stop()).clean).toBe(true);
    await waitFor(async () => (await api.get('/api/cluster')).body.settingsDisagreements.length === 0, {
      timeoutMs: 30_000,
      message: 'the disagreement gone with the stray process',
    });
  }, 120_000);

  it('warns before starting a second platform when another DATA_DIR is given while npm start runs from this checkout', async () => {
    const second = await startProduct({ dataDir: otherDataDir, port: 0, command: ['start:role', 'pools'], env: FLEET });
    started.push(second);
    const warning = second.lines().find((l) => l.level === 40 && l.runningDataDir === dataDir);
    expect(warning, second.output().slice(-3000)).toBeDefined();
    expect(warning!.msg).toContain(`DATA_DIR=${dataDir}`);
    expect(warning!.msg).toContain(`DATA_DIR=${otherDataDir}`);
    expect(warning!.msg).toContain(`To add this process to the running platform instead, stop it and start it with DATA_DIR=${dataDir}`);
    // It did what it said: its own services, not the running platform's.
    expect(second.output()).toContain('embedded redis-server started');
    expect(second.output()).not.toContain('attached to the embedded services');
    expect((await second.stop()).clean).toBe(true);
  }, 180_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
