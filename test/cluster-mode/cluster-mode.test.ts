/**
 * The platform on a real 3-master Redis Cluster (redis-server --cluster-enabled yes ×3 joined by
 * redis-cli --cluster create), selected by REDIS_CLUSTER_NODES, every role in one process:
 * - a job enqueued and processed on every queue of the registry, through the real roles: a feed
 *   refresh against the fixture feed server, a crawl in Chromium against the fixture marketplace
 *   and its result through the pipeline (a flow across two queues: one slot), pool refills and
 *   consumed marks, message write-behind, and the leader's maintenance tasks on their job schedulers;
 * - pool pop and refill through the API;
 * - the item state machine in batches of 500 (1,200 items per result, three round trips each
 *   way) on IPs whose item hashes live on each of the three masters;
 * - the leader lease: the platform leads (shared config published), whileLeader work runs,
 *   two lease managers on the cluster agree on one holder, renew, hand over on release;
 * - the blacklist: login, logout, the token refused afterwards (on the pool and message routes too);
 * and at the end: every queue completed jobs, none failed, and no cluster error (CROSSSLOT,
 * redirections not followed, cross-node pipelines) appeared in any job or log line.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaderTerm } from '../../src/coordination/leadership.js';
import { LeaseManager } from '../../src/coordination/lease-manager.js';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { queueList } from '../../src/queues/definitions.js';
import type { CrawledItem } from '../../src/queues/declarations/crawl.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { ROLE_NAMES } from '../../src/runtime/roles.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { TEST_ADMIN } from '../support/env.js';
import { startTestRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { waitFor } from '../support/wait.js';
import { CLUSTER_ERROR, startClusterPlatform, type ClusterPlatform } from './support.js';

const KEYWORD = 'cluster-mode';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('platform on a 3-master Redis Cluster', () => {
  let cluster: TestRedisCluster;
  let feeds: FeedServer;
  let market: FixtureMarketplace;
  let t: ClusterPlatform;
  let probe: Cluster;

  beforeAll(async () => {
    cluster = await startTestRedisCluster();
    feeds = await startFeedServer();
    market = await FixtureMarketplace.start({ seed: 'cluster-mode', itemsPerPage: 20 });
    t = await startClusterPlatform(cluster, [...ROLE_NAMES], {
      CRAWL_SITE: 'fixture',
      CRAWL_BASE_URL: market.url,
      CRAWLER_HUMANIZE: 'false',
      CRAWLER_NETWORK_IDLE_MS: '100',
      CRAWLER_PAGE_TIMEOUT_MS: '30000',
      SCHEDULER_PAGES_ON_SALE: '1',
      SCHEDULER_PAGES_SOLD: '1',
      POOL_SIZE: '20',
      POOL_REFILL_THRESHOLD: '10',
      POOL_REFILL_BATCH: '10',
      POOL_CONSUMED_BATCH: '7',
      POOL_TRIGGER_INTERVAL_MS: '10',
      MESSAGE_PERSIST_SWEEP_MS: '300',
      // The leader's periodic work runs several times during the file (reconciliations, checks,
      // config refresh, registry trim), and lease renewals come every 2 s.
      SCHEDULER_RECONCILE_INTERVAL: '2',
      FEED_RECONCILE_INTERVAL_SECONDS: '2',
      POOL_CHECK_INTERVAL_MS: '1000',
      CONFIG_REFRESH_INTERVAL_MS: '1000',
      CONFIG_SYNC_INTERVAL_MS: '1000',
      INSTANCE_TTL_MS: '6000',
      LEADER_TTL_MS: '6000',
    });
    probe = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    probe.on('error', () => undefined);
  });
  afterAll(async () => {
    probe?.disconnect();
    await t?.stop();
    await market?.stop();
    await feeds?.stop();
    await cluster?.destroy();
  });

  const ctx = () => t.platform.ctx;
  const sql = async <T = any>(text: string, params: unknown[] = []) => (await ctx().db.pool.query(text, params)).rows as T[];

  /** Polls GET /api/tasks/:id until the task finished; returns the task view. */
  async function finishedTask(taskId: string, timeoutMs = 30_000) {
    const read = async () => {
      const res = await t.api.get(`/api/tasks/${taskId}`);
      return res.status === 200 ? res.body : undefined;
    };
    await waitFor(async () => ['completed', 'failed'].includes((await read())?.state), {
      timeoutMs,
      intervalMs: 200,
      message: `task ${taskId} did not finish`,
    });
    // The view reads the job, then its state: a job finishing in between shows the final state
    // with the job as it was just before. Finished, it no longer changes: read it again.
    return read();
  }

  /**
   * Pops (pop and pop-many in turn) until `total` rows came out, then expects 404 pool_empty. An
   * empty answer is not the end while a refill holds the remaining rows reserved: pop again.
   */
  async function popAll(type: string, groupId: number, total: number) {
    const served: { id: number; text: string; source: string }[] = [];
    let round = 0;
    await waitFor(
      async () => {
        const many = round++ % 2 === 1;
        const res = many ? await t.api.post(`/api/pools/${type}/${groupId}/pop-many`, { count: 3 }) : await t.api.post(`/api/pools/${type}/${groupId}/pop`);
        if (res.status === 200) served.push(...(many ? res.body.items : [res.body]));
        else if (res.status !== 404) throw new Error(`pop answered ${res.status}: ${JSON.stringify(res.body)}`);
        return served.length >= total;
      },
      { timeoutMs: 30_000, intervalMs: 10, message: `${type}/${groupId}: not every row was served` },
    );
    const empty = await t.api.post(`/api/pools/${type}/${groupId}/pop`);
    expect(empty.status).toBe(404);
    expect(empty.body.error.code).toBe('pool_empty');
    return served;
  }

  const slotOf = async (key: string) => Number(await probe.cluster('KEYSLOT', key));
  /** The master (host:port) serving a key's slot. */
  async function masterOf(key: string): Promise<string> {
    return probe.slots[await slotOf(key)]![0]!;
  }

  it('runs on the cluster named by REDIS_CLUSTER_NODES: three masters, the platform keys spread over them', async () => {
    expect(ctx().connections.target).toEqual({ kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) });
    expect(ctx().redis).toBeInstanceOf(Cluster);
    expect(probe.nodes('master')).toHaveLength(3);
    const ready = await t.api.withToken(undefined).get('/readyz');
    expect(ready.body.dependencies).toEqual({ redis: 'up', database: 'up' });
    // Every process registers itself and the leader publishes the shared config: keys on the cluster.
    await waitFor(async () => (await t.api.get('/api/cluster')).body.configVersion >= 1, { message: 'no shared config published' });
  });

  it('refreshes a subscribed feed (feed-refresh)', async () => {
    const sub = await t.api.post('/api/feeds', { url: feeds.url('/rss/cluster-mode.xml?items=12') });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const task = await finishedTask(sub.body.taskId);
    expect(task.state, task.failedReason).toBe('completed');
    const articles = await t.api.get(`/api/feeds/${sub.body.id}/articles?limit=50`);
    expect(articles.body.articles).toHaveLength(12);
    const feed = await t.api.get(`/api/feeds/${sub.body.id}`);
    expect(feed.body).toMatchObject({ status: 'ok', errorCount: 0 });
    expect(feed.body.lastFetchedAt).not.toBeNull();
    expect(feed.body.nextRefreshAt).not.toBeNull();
  });

  it('crawls an IP in Chromium against the fixture marketplace and runs its result through the pipeline (crawl, crawl-result)', async () => {
    const created = await t.api.post('/api/ips', { name: 'Cluster mode', keyword: KEYWORD });
    expect(created.status, `${JSON.stringify(created.body)}\nwarnings and errors logged:\n${t.notable.slice(-20).join('\n')}`).toBe(201);
    const ip = created.body;
    const task = await finishedTask(`result-${ip.currentCrawl.taskId}`, 120_000);
    expect(task.state, task.failedReason).toBe('completed');
    const perPage = market.catalog.itemsPerPage;
    // Its first crawl: the baseline (items recorded, nothing counted).
    expect(task.result).toMatchObject({ status: 'processed', baseline: true, items: 2 * perPage, inflow: 0, outflow: 0 });
    expect((await t.api.get(`/api/ips/${ip.id}/items?status=on_sale`)).body.total).toBe(perPage);
    // The closed loop: the next crawl is scheduled (a pending crawl job named by the IP's chain).
    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(detail.currentCrawl.taskId).toBe(task.result.nextTaskId);
    expect(['delayed', 'waiting', 'prioritized']).toContain(detail.currentCrawl.state);
  });

  it('pops a pool through the API while refills keep it filled, each row once, and marks every row consumed (pool-refill, pool-consumed)', async () => {
    const items = Array.from({ length: 60 }, (_, n) => ({ text: `cm-${n}`, batchId: 1 }));
    expect((await t.api.post('/api/pools/titles/5/items', { items })).status).toBe(201);
    const overview = async () => ((await t.api.get('/api/pools')).body.pools as any[]).find((p) => p.type === 'titles' && p.groupId === 5);
    await waitFor(async () => (await overview())?.poolLength === 20, { message: 'pool not filled after import' });

    const served = await popAll('titles', 5, 60);
    expect(served).toHaveLength(60);
    expect(new Set(served.map((s) => s.id)).size).toBe(60);
    // More than one pool's worth came from Redis: refills ran while popping.
    expect(served.filter((s) => s.source === 'pool').length).toBeGreaterThan(20);
    await waitFor(async () => (await sql(`SELECT count(*)::int AS n FROM titles WHERE group_id = 5 AND status = 'consumed'`))[0].n === 60, {
      message: 'consumed marks did not land',
    });
    expect(await overview()).toMatchObject({ poolLength: 0, pendingConsumed: 0 });
  });

  it('accepts messages into the session caches and writes them behind to the DB (message-persist)', async () => {
    const sessions = ['cm-a', 'cm-b', 'cm-c'];
    for (const session of sessions) {
      for (let i = 0; i < 5; i++) {
        const res = await t.api.post(`/api/sessions/${session}/messages`, { role: i % 2 ? 'assistant' : 'user', content: `${session} ${i}` });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      }
      // A new session's list is complete only once a read filled it from the DB (merge script).
      const expected = [0, 1, 2, 3, 4].map((i) => `${session} ${i}`);
      const read = await waitFor(
        async () => {
          const res = await t.api.get(`/api/sessions/${session}/messages`);
          expect(res.body.messages.map((m: { content: string }) => m.content)).toEqual(expected);
          return res.body.source === 'cache';
        },
        { message: `session ${session} never answered from the cache` },
      );
      expect(read).toBe(true);
    }
    await waitFor(async () => (await sql(`SELECT count(*)::int AS n FROM chat_messages WHERE session_id = ANY($1)`, [sessions]))[0].n === 15, {
      message: 'messages not persisted',
    });
  });

  it('runs every maintenance task of the leader on its job scheduler (maintenance)', async () => {
    const queue = ctx().queues.queue('maintenance');
    const tasks = (await queue.getJobSchedulers(0, -1)).map((s) => s.key).sort();
    expect(tasks).toEqual([
      'crawl-reconcile',
      'feeds-reconcile',
      'feeds-trim-articles',
      'instance-registry-trim',
      'job-schedulers-keep',
      'processed-results-trim',
      'shared-config-publish',
    ]);
    await waitFor(
      async () => {
        const done = new Set((await queue.getJobs(['completed'], 0, -1)).map((j) => j?.name));
        return tasks.every((task) => done.has(task));
      },
      { timeoutMs: 30_000, message: 'not every maintenance task ran' },
    );
  });

  it('runs the item state machine in batches of 500 on IPs whose item hashes live on each master', async () => {
    // One IP per master (an IP's item hashes share its hash tag, so one IP is one slot).
    const byMaster = new Map<string, number>();
    for (let id = 1000; byMaster.size < 3; id++) {
      const master = await masterOf(ctx().keys.itemState(id, 'x'));
      if (!byMaster.has(master)) byMaster.set(master, id);
    }
    const ips = [...byMaster.values()];
    for (const id of ips) {
      // Crawled before (so the first result here is counted, not a baseline).
      await sql(`INSERT INTO ips (id, name, keyword, active, last_crawled_at, updated_at) VALUES ($1, $2, $3, false, now() - interval '2 minutes', now())`, [
        id,
        `Batch ${id}`,
        `batch-${id}`,
      ]);
    }
    const item = (n: number, status: CrawledItem['status'] = 'on_sale', price = 1000): CrawledItem => ({
      sourceId: `s-${n}`,
      title: `item ${n}`,
      price,
      imageUrl: null,
      itemUrl: `http://127.0.0.1/item/${n}`,
      status,
    });
    const deliver = async (ipId: number, taskId: string, items: CrawledItem[], crawledAt: Date) => {
      const payload = { ipId, taskId, items, totalFound: items.length, pagesCrawled: 3, crawledAt: crawledAt.toISOString(), errors: [] };
      const job = await ctx().queues.add('crawlResult', 'result', payload, { jobId: `result-${taskId}` });
      const task = await finishedTask(job.id!, 60_000);
      expect(task.state, task.failedReason).toBe('completed');
      return task.result;
    };
    const first = new Date(Date.now() - 60_000);
    const second = new Date(Date.now() - 30_000);

    const firstResults = await Promise.all(
      ips.map((id) =>
        deliver(
          id,
          `batch-${id}-1`,
          Array.from({ length: 1200 }, (_, n) => item(n)),
          first,
        ),
      ),
    );
    for (const r of firstResults) {
      expect(r).toMatchObject({ status: 'processed', items: 1200, inflow: 1200, outflow: 0 });
      expect(r.transitions).toMatchObject({ new_listing: 1200, unchanged: 0 });
    }
    // Second crawl: 0..599 sold, 600..699 repriced, 700..1199 unchanged, 1200..1299 new; the
    // stored states are read back over three batches.
    const changed = Array.from({ length: 1300 }, (_, n) => (n < 600 ? item(n, 'sold') : n < 700 ? item(n, 'on_sale', 1500) : item(n)));
    const secondResults = await Promise.all(ips.map((id) => deliver(id, `batch-${id}-2`, changed, second)));
    for (const r of secondResults) {
      expect(r.transitions).toEqual({ new_listing: 100, new_sold: 0, sold: 600, relisted: 0, price_change: 100, unchanged: 500 });
    }
    for (const id of ips) {
      expect((await t.api.get(`/api/ips/${id}/items?status=on_sale&limit=1`)).body.total).toBe(700);
      expect((await t.api.get(`/api/ips/${id}/items?status=sold&limit=1`)).body.total).toBe(600);
      for (const [n, status, price] of [
        [0, 'sold', 1000],
        [650, 'on_sale', 1500],
        [1199, 'on_sale', 1000],
        [1250, 'on_sale', 1000],
      ] as const) {
        expect(await probe.hgetall(ctx().keys.itemState(id, `s-${n}`))).toMatchObject({
          status,
          price: String(price),
          first_seen: String(n < 1200 ? first.getTime() : second.getTime()),
          last_seen: String(second.getTime()),
        });
      }
    }
    expect(new Set(await Promise.all(ips.map((id) => masterOf(ctx().keys.itemState(id, 's-0')))))).toHaveProperty('size', 3);
  });

  it('leads: the platform holds the cluster lease, its whileLeader work runs, and two lease managers on the cluster agree on one holder', async () => {
    const c = ctx();
    const status = (await t.api.get('/api/cluster')).body;
    expect(status.leader).toBe(c.instanceId);
    expect(status.instances.map((i: { id: string }) => i.id)).toEqual([c.instanceId]);
    expect(status.leases.filter((l: { holder: string | null }) => l.holder === c.instanceId).length).toBeGreaterThanOrEqual(2);

    const terms: LeaderTerm[] = [];
    c.leadership.whileLeader('cluster-mode-probe', async (term) => {
      terms.push(term);
      return async () => undefined;
    });
    await waitFor(() => terms.length === 1 && c.leadership.isLeader('cluster-mode-probe'), { message: 'whileLeader work did not start' });
    expect(await probe.get(c.keys.lease('cluster-mode-probe'))).toBe(terms[0]!.value);
    expect(terms[0]!.value.startsWith(`${c.instanceId}#${terms[0]!.token}@`)).toBe(true);

    // Two more instances compete for one work with a 2 s lease: one holder, renewed, handed over on release.
    const connections = new RedisConnections(c.connections.target, { connectTimeoutMs: 2000, commandTimeoutMs: 1000 }, silentLogger());
    const started: string[] = [];
    const values: string[] = [];
    const managers = ['lease-a', 'lease-b'].map((id) => {
      const m = new LeaseManager({
        redis: connections.create('command', id),
        keys: c.keys,
        instanceId: id,
        ttlMs: 2000,
        logger: silentLogger(),
        metrics: new Metrics({ defaultMetrics: false }),
      });
      m.whileLeader('cluster-mode-contest', async (term) => {
        started.push(`${id}#${term.token}`);
        values.push(term.value);
        return async () => undefined;
      });
      return m;
    });
    try {
      const holder = await waitFor(() => managers.find((m) => m.isLeader('cluster-mode-contest')), { message: 'nobody acquired the lease' });
      for (let i = 0; i < 8; i++) {
        await sleep(300); // 2.4 s: past the TTL, so the lease was renewed
        expect(managers.filter((m) => m.isLeader('cluster-mode-contest'))).toEqual([holder]);
      }
      expect(started).toHaveLength(1);
      await holder.stop(); // releases the lease
      const other = managers.find((m) => m !== holder)!;
      await waitFor(() => other.isLeader('cluster-mode-contest'), { message: 'the lease was not taken over' });
      expect(started).toHaveLength(2);
      const [firstToken, secondToken] = started.map((s) => Number(s.split('#')[1]));
      expect(secondToken).toBeGreaterThan(firstToken!);
      expect(await probe.get(c.keys.lease('cluster-mode-contest'))).toBe(values[1]);
      expect(values[1]!.startsWith(`${started[1]}@`)).toBe(true);
    } finally {
      await Promise.all(managers.map((m) => m.stop()));
      await connections.close();
    }
    expect(await probe.get(c.keys.lease('cluster-mode-contest'))).toBeNull();
  });

  it('follows ASK and MOVED while slots move to other masters mid-use: messages, a pool, the leader lease, the queues', async () => {
    const c = ctx();
    const session = 'cm-moving';
    let sent = 0;
    const post = async () => {
      const res = await t.api.post(`/api/sessions/${session}/messages`, { role: 'user', content: `moving ${sent}` });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      sent++;
    };
    for (let i = 0; i < 3; i++) await post();
    const rows = Array.from({ length: 30 }, (_, n) => ({ text: `mv-${n}`, batchId: 1 }));
    expect((await t.api.post('/api/pools/contents/8/items', { items: rows })).status).toBe(201);
    const poolKey = c.keys.pool('contents', 8);
    await waitFor(async () => (await probe.llen(poolKey)) === 20, { message: 'pool not filled' });
    const term = c.leadership.held().find((h) => h.task === 'cluster')!;
    expect(term).toBeDefined();

    // Each slot goes to another master while messages keep being posted: the session list and its
    // persist buffer, the pool, the `cluster` lease with the shared config, and the slot of the
    // message-persist queue family (its BullMQ keys).
    const persistQueue = c.queues.queue('messagePersist', 0);
    const keys = [c.keys.sessionMessages(session), c.keys.messagePersistBuffer(0), poolKey, c.keys.lease('cluster'), persistQueue.toKey('x')];
    const slots = [...new Set(await Promise.all(keys.map(slotOf)))];
    let moving = true;
    const writer = (async () => {
      while (moving) await post();
    })();
    try {
      for (const slot of slots) {
        const owner = await cluster.ownerOf(slot);
        await cluster.moveSlot(slot, cluster.nodes.find((n) => n.port !== owner)!.port);
      }
    } finally {
      moving = false;
      await writer;
    }
    for (let i = 0; i < 3; i++) await post();

    // Messages: every one in the cache in order and written behind to the DB.
    const expected = Array.from({ length: sent }, (_, i) => `moving ${i}`);
    await waitFor(
      async () => {
        const res = await t.api.get(`/api/sessions/${session}/messages?limit=500`);
        return res.body.source === 'cache' && JSON.stringify(res.body.messages.map((m: { content: string }) => m.content)) === JSON.stringify(expected);
      },
      { message: 'the moved session did not answer every message from the cache' },
    );
    await waitFor(async () => (await sql(`SELECT count(*)::int AS n FROM chat_messages WHERE session_id = $1`, [session]))[0].n === sent, {
      message: 'messages posted around the move were not persisted',
    });
    // The pool: popped to the end on its new master, each row once, refilled from the DB.
    const served = (await popAll('contents', 8, 30)).map((s) => s.id);
    expect(served).toHaveLength(30);
    expect(new Set(served).size).toBe(30);
    // The lease: renewed on its new master within one renewal period, same term.
    const pttl = await probe.pttl(c.keys.lease('cluster'));
    await waitFor(async () => (await probe.pttl(c.keys.lease('cluster'))) > pttl, { timeoutMs: 10_000, message: 'the moved lease was not renewed' });
    expect(c.leadership.held().find((h) => h.task === 'cluster')).toEqual(term);
  });

  it('refuses a logged-out token (the blacklist) and counts failed logins', async () => {
    const anon = t.api.withToken(undefined);
    const login = await anon.post('/api/auth/login', TEST_ADMIN);
    expect(login.status).toBe(200);
    const user = t.api.withToken(login.body.token);
    expect((await user.get('/api/cluster')).status).toBe(200);
    expect((await user.post('/api/auth/logout')).status).toBe(204);
    const refused = await user.get('/api/cluster');
    expect(refused.status).toBe(401);
    // The hot routes check the blacklist up front here (a script cannot read it beside their keys).
    for (const res of [
      await user.post('/api/pools/titles/5/pop'),
      await user.post('/api/sessions/cluster-logged-out/messages', { role: 'user', content: 'refused' }),
      await user.get('/api/sessions/cluster-logged-out/messages'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('token_revoked');
    }
    const sid = JSON.parse(Buffer.from(login.body.token.split('.')[1], 'base64url').toString()).sid as string;
    expect(await probe.exists(ctx().keys.blacklistedSession(sid))).toBe(1);
    // The admin's own session is another one: still accepted.
    expect((await t.api.get('/api/cluster')).status).toBe(200);
    expect((await anon.post('/api/auth/login', { ...TEST_ADMIN, password: 'wrong' })).status).toBe(401);
    expect(Number(await probe.get(ctx().keys.loginAttempts(TEST_ADMIN.username, '127.0.0.1')))).toBeGreaterThanOrEqual(1);
  });

  it('completed jobs on every queue, failed none, and logged no cluster error', async () => {
    // The worker factory's counters: some queues drop completed jobs at once (removeOnComplete).
    const metric = async (name: string) => (await ctx().metrics.registry.getSingleMetric(name)!.get()).values;
    const completed = await metric('wp_jobs_completed_total');
    const failed = (await metric('wp_jobs_failed_total')).filter((v) => v.labels.outcome !== 'delayed' && v.value > 0);
    for (const def of queueList) {
      expect(completed.find((v) => v.labels.queue === def.name)?.value ?? 0, def.name).toBeGreaterThan(0);
      const queue = ctx().queues.byName(def.name)!;
      expect(await queue.getFailedCount(), def.name).toBe(0);
      const jobs = await queue.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active'], 0, -1);
      const traces = jobs.filter(Boolean).flatMap((j) => [...(j.stacktrace ?? []), j.failedReason ?? '']);
      expect(
        traces.filter((s) => CLUSTER_ERROR.test(s)),
        def.name,
      ).toEqual([]);
    }
    expect(
      failed.map((v) => v.labels),
      t.notable.join('\n').slice(0, 4000),
    ).toEqual([]);
    // The job views read every queue on the cluster: the API, Bull Board (with its Redis stats), metrics.
    const names = queueList.map((q) => q.name);
    for (const path of ['/api/queues', '/api/dead-jobs', '/admin/queues/api/queues', '/admin/queues/api/redis/stats', '/metrics']) {
      const res = await t.api.get(path);
      expect(res.status, path).toBe(200);
      if (path !== '/api/dead-jobs' && path !== '/admin/queues/api/redis/stats') {
        const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
        expect(
          names.filter((n) => !text.includes(n)),
          path,
        ).toEqual([]);
      }
    }
    expect(t.notable.filter((line) => CLUSTER_ERROR.test(line))).toEqual([]);
  });
});
