/**
 * Queue partitions (QUEUE_SHARDS=6) on a real 3-master Redis Cluster (loopback), with two
 * platform processes sharing the work: A runs cluster, feeds, pipeline and api; B runs feeds,
 * pipeline, pools, messages and api. Crawls are taken by a stand-in crawler in the test process
 * (a partition-aware one: one BullMQ worker per crawl partition, each opening its crawl's flow in
 * the partition the crawl came from, as src/crawl/process-crawl-job.ts does), so no Chromium runs.
 *
 * - Every invariant holds across partitions and processes, with the queues sampled all along:
 *   one pending refresh per feed (never more than one periodic and one manual job, pending or
 *   running, over every feed-refresh partition), the spacing of requests to one host, each pool
 *   row served once, messages stored once, one pending crawl per IP.
 * - The jobs of every partitioned family (crawl, feeds, messages) are spread over all three
 *   masters, each partition's keys in one slot (its hash tag); the families that are not
 *   partitioned (pools, maintenance) each sit in one slot; no queue key lies outside the layout.
 * - The job console sees every partition: GET /api/queues answers each partitioned queue with its
 *   six partitions and their summed counts, GET /api/tasks/:id finds jobs in partitions other than
 *   the first, and GET /api/dead-jobs?queue=feed-refresh lists the dead refreshes of every partition.
 */
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, JobType } from 'bullmq';
import { Cluster } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { feedIdOfJob } from '../../src/feeds/feed-scheduler.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { QueueKey } from '../../src/queues/definitions.js';
import { FAMILY_OF, PARTITIONED_FAMILIES, QueueLayout } from '../../src/queues/layout.js';
import { QueueRegistry } from '../../src/queues/registry.js';
import { connectionOptions } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { ipIdOfTask } from '../../src/crawl-scheduling/task-ids.js';
import { createKeys } from '../../src/redis/keys.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { waitForTask } from '../feeds/support.js';
import { duplicates, poolOverview, type Served } from '../pools/pool-helpers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { waitFor } from '../support/wait.js';
import { queueKeyCensus, sessionsCoveringShards } from './partition-support.js';
import { startStandInCrawler, type StandInCrawler } from './stand-in-crawler.js';
import { onSale } from '../pipeline/helpers.js';
import { CLUSTER_ERROR } from './support.js';

const SHARDS = 6;
const PREFIX = 'wp';
const keys = createKeys(PREFIX);
const SPACING_MS = 400;
const SPACED_HOSTS = ['127.0.0.2', '127.0.0.3'];
const FEEDS_PER_HOST = 6;
const IPS = 12;
const CRAWL_ROUNDS = 3;
const POOL_ROWS = 240;
const SESSIONS_PER_SHARD = 2;
const MESSAGES_PER_SESSION = 10;
/** Pending or running: the states counted by the "one pending job" invariants. */
const IN_FLIGHT: JobType[] = ['delayed', 'waiting', 'prioritized', 'active'];

describe(`queue partitions (QUEUE_SHARDS=${SHARDS}) on a 3-master Redis Cluster, two platform processes`, () => {
  let cluster: TestRedisCluster;
  let server: FeedServer;
  let db: TestDatabase;
  let sql: pg.Pool;
  const processes: PlatformProcess[] = [];
  const dataDirs: string[] = [];
  let apis: ApiClient[] = [];
  let connections: RedisConnections;
  let queues: QueueRegistry;
  let crawler: StandInCrawler | undefined;
  let probe: Cluster;

  // What the invariants test created, for the later tests.
  const feedIds: number[] = [];
  const ipIds: number[] = [];
  const feedTasks: { feedId: number; taskId: string }[] = [];
  const crawlTasks: { ipId: number; taskId: string }[] = [];

  beforeAll(async () => {
    [cluster, server, db] = await Promise.all([
      startTestRedisCluster({ masters: 3 }),
      startFeedServer({ hosts: ['127.0.0.1', ...SPACED_HOSTS] }),
      createTestDatabase(),
    ]);
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    const env = (instance: string) => {
      const e = testEnv({ url: '' }, db, {
        REDIS_URL: '', // unset: the cluster seeds select the Redis Cluster
        REDIS_CLUSTER_NODES: cluster.seeds,
        REDIS_PREFIX: PREFIX,
        INSTANCE_ID: instance,
        QUEUE_SHARDS: String(SHARDS),
        DATABASE_POOL_SIZE: '5',
        LOG_LEVEL: 'warn',
        HTTP_ACCESS_LOG: 'false',
        FEED_DOMAIN_MIN_INTERVAL_MS: String(SPACING_MS),
        FEED_RECONCILE_INTERVAL_SECONDS: '0',
        FEED_WORKER_CONCURRENCY: '12',
        FEED_ATTEMPTS: '2',
        FEED_RETRY_DELAY_MS: '200',
        MESSAGE_PERSIST_SHARDS: String(SHARDS),
        MESSAGE_PERSIST_SWEEP_MS: '500',
        POOL_SIZE: '40',
        POOL_REFILL_THRESHOLD: '20',
        POOL_REFILL_BATCH: '20',
        POOL_CONSUMED_BATCH: '25',
        POOL_CHECK_INTERVAL_MS: '500',
        POOL_TRIGGER_INTERVAL_MS: '10',
        // A process that dies hands its jobs back within seconds (none should here).
        WORKER_LOCK_DURATION_MS: '10000',
      });
      dataDirs.push(e.DATA_DIR!);
      return e;
    };
    // Started together; whichever started is stopped in afterAll even if the other failed to start.
    const started = await Promise.allSettled([
      spawnPlatform('cluster,feeds,pipeline,api', env('proc-a'), { startTimeoutMs: 120_000 }),
      spawnPlatform('feeds,pipeline,pools,messages,api', env('proc-b'), { startTimeoutMs: 120_000 }),
    ]);
    processes.push(...started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    apis = await Promise.all(
      processes.map(async (p) => {
        const api = new ApiClient(p.apiUrl!);
        await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
        return api;
      }),
    );

    // The test's own view of the queues (the same layout as the processes), and the crawler.
    const config = loadConfig(env('test'));
    connections = new RedisConnections(
      { kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
      connectionOptions(config),
      silentLogger(),
    );
    queues = new QueueRegistry({ config, connections, keys, layout: new QueueLayout({ prefix: PREFIX, cluster: true, shards: SHARDS }) });
    // The market moves a little between crawls: one or two items.
    crawler = startStandInCrawler(
      { config, connections, keys, queues },
      { concurrency: SHARDS, items: (job, n) => [onSale(`ip${job.data.ipId}-a`), ...(n % 2 ? [onSale(`ip${job.data.ipId}-b`, 900 + n)] : [])] },
    );
    probe = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    probe.on('error', () => undefined);
  }, 180_000);

  afterAll(async () => {
    await crawler?.close();
    await queues?.close();
    await connections?.close();
    probe?.disconnect();
    await Promise.all(processes.map((p) => p.stop()));
    await sql?.end();
    await server?.stop();
    await db?.drop();
    await cluster?.destroy();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const api = (n: number) => apis[n % apis.length]!;

  /**
   * The jobs of every partition of `key` in `states`, read one partition at a time (BullMQ reads a
   * queue's state lists in one script, and a feed's or IP's jobs all live in its one partition, so
   * each business key is seen at one instant).
   */
  async function jobsOf(key: QueueKey, states: JobType[]): Promise<Job[]> {
    return (await Promise.all(queues.everywhere(key).map((q) => q.getJobs(states, 0, -1)))).flat().filter(Boolean);
  }

  /**
   * One look at every partition: over-pending (more than one crawl of an IP, more than one periodic
   * or one manual refresh of a feed, pending or running), and what was in flight (so that a run
   * whose samples all missed the work shows as such).
   */
  async function sample(): Promise<{ violations: string[]; crawls: number; manualBesidePeriodic: number }> {
    const violations: string[] = [];
    const perIp = new Map<number, string[]>();
    const crawls = await jobsOf('crawl', IN_FLIGHT);
    for (const j of crawls) perIp.set(j.data.ipId, [...(perIp.get(j.data.ipId) ?? []), j.id!]);
    for (const [ip, ids] of perIp) if (ids.length > 1) violations.push(`IP ${ip}: crawls ${ids.join(', ')}`);
    const perFeed = new Map<string, string[]>();
    for (const j of await jobsOf('feedRefresh', IN_FLIGHT)) {
      const k = `${j.data.feedId}/${j.data.trigger === 'manual' ? 'manual' : 'periodic'}`;
      perFeed.set(k, [...(perFeed.get(k) ?? []), `${j.id} (${j.queueName})`]);
    }
    for (const [k, ids] of perFeed) if (ids.length > 1) violations.push(`feed ${k}: ${ids.join(', ')}`);
    const manualBesidePeriodic = [...perFeed.keys()].filter((k) => k.endsWith('/manual') && perFeed.has(k.replace(/manual$/, 'periodic'))).length;
    return { violations, crawls: crawls.length, manualBesidePeriodic };
  }

  it('keeps every invariant across partitions and both processes: one pending refresh per feed, domain spacing, pool rows once, messages once, one pending crawl per IP', async () => {
    // The sampler: every pending/running crawl and refresh, over every partition, all along.
    let sampling = true;
    let samples = 0;
    let mostCrawls = 0;
    let sawManualBesidePeriodic = 0;
    const seen: string[] = [];
    const sampleErrors: string[] = [];
    const sampler = (async () => {
      while (sampling) {
        try {
          const s = await sample();
          seen.push(...s.violations);
          samples++;
          mostCrawls = Math.max(mostCrawls, s.crawls);
          if (s.manualBesidePeriodic > 0) sawManualBesidePeriodic++;
        } catch (err) {
          sampleErrors.push((err as Error).message);
        }
        await sleep(100);
      }
    })();

    const feedsWork = async () => {
      const created = await Promise.all(
        SPACED_HOSTS.flatMap((host, h) =>
          Array.from({ length: FEEDS_PER_HOST }, (_, i) => api(i + h).post('/api/feeds', { url: server.url(`/rss/qp-${h}-${i}.xml?items=3`, host) })),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(Array(created.length).fill(201));
      feedIds.push(...created.map((r) => r.body.id as number));
      const initial = await Promise.all(created.map((r, n) => waitForTask(api(n), r.body.taskId, 60_000)));
      expect(initial.map((t) => t.result?.outcome)).toEqual(Array(created.length).fill('refreshed'));
      feedTasks.push(...created.map((r) => ({ feedId: r.body.id as number, taskId: r.body.taskId as string })));

      // A burst per feed from both API processes: manual and periodic requests at once.
      const replies = await Promise.all(
        feedIds.flatMap((feedId) => [0, 1, 2, 3].map((k) => api(k).post('/api/queue/schedule-feed', { feed_id: feedId, force_immediate: k < 3 }))),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(replies.length).fill(202));
      const manual = [...new Set(replies.filter((r) => r.body.status === 'queued').map((r) => r.body.task_id as string))];
      expect(manual.length).toBeGreaterThanOrEqual(feedIds.length);
      await Promise.all(manual.map((id, n) => waitForTask(api(n), id, 60_000)));
      // Settled: no manual refresh left, nothing running, one delayed periodic refresh per feed.
      const ours = (jobs: Job[]) => jobs.filter((j) => feedIds.includes(j.data.feedId));
      await waitFor(
        async () => {
          const jobs = ours(await jobsOf('feedRefresh', IN_FLIGHT));
          const delayed = ours(await jobsOf('feedRefresh', ['delayed']));
          return jobs.length === feedIds.length && delayed.length === feedIds.length && jobs.every((j) => j.data.trigger !== 'manual');
        },
        { timeoutMs: 60_000, message: 'the refresh burst did not settle into one periodic refresh per feed' },
      );
      const pending = ours(await jobsOf('feedRefresh', IN_FLIGHT));
      expect(pending.map((j) => j.data.feedId).sort((a, b) => a - b)).toEqual([...feedIds].sort((a, b) => a - b));
      for (const j of pending) expect(j.queueName).toBe(`feed-refresh.${j.data.feedId % SHARDS}-of-${SHARDS}`);

      // Both processes refreshed (every process consumes every partition).
      const done = await Promise.all([...feedTasks.map((t) => t.taskId), ...manual].map((id) => queues.queue('feedRefresh', feedIdOfJob(id)).getJob(id)));
      expect(new Set(done.map((j) => j?.processedBy))).toEqual(new Set(['feeds@proc-a', 'feeds@proc-b']));
    };

    const crawlWork = async () => {
      const created = await Promise.all(Array.from({ length: IPS }, (_, i) => api(i).post('/api/ips', { name: `Partition ${i}`, keyword: `qp-${i}` })));
      expect(
        created.map((r) => r.status),
        JSON.stringify(created.map((r) => r.body)),
      ).toEqual(Array(IPS).fill(201));
      ipIds.push(...created.map((r) => r.body.id as number));
      // Each IP's first crawl is due at once (the reply may already name its successor: the
      // crawler and the pipeline can be that quick): crawled, and the next one scheduled.
      await waitFor(
        async () => {
          const views = await Promise.all(ipIds.map((id, n) => api(n).get(`/api/ips/${id}`)));
          return views.every((v) => v.body.lastCrawledAt !== null && v.body.currentCrawl?.state === 'delayed');
        },
        { timeoutMs: 60_000, message: 'not every new IP had its first crawl' },
      );

      for (let round = 0; round < CRAWL_ROUNDS; round++) {
        // Three triggers per IP at once, from both API processes: one crawl each time.
        const replies = await Promise.all(ipIds.flatMap((id) => [0, 1, 2].map((k) => api(k).post(`/api/ips/${id}/crawl`))));
        expect(
          replies.map((r) => r.status),
          JSON.stringify(replies.map((r) => r.body)),
        ).toEqual(Array(replies.length).fill(202));
        const tasks = [...new Set(replies.map((r) => r.body.task_id as string))];
        const results = await Promise.all(tasks.map((id, n) => waitForTask(api(n), `result-${id}`, 60_000)));
        for (const r of results) expect(r.state, r.failedReason).toBe('completed');
        crawlTasks.push(...tasks.map((taskId) => ({ ipId: ipIdOfTask(taskId)!, taskId })));
        await waitFor(
          async () => {
            const views = await Promise.all(ipIds.map((id, n) => api(n).get(`/api/ips/${id}`)));
            return views.every((v) => v.body.currentCrawl?.state === 'delayed' && !tasks.includes(v.body.currentCrawl.taskId));
          },
          { timeoutMs: 60_000, message: `crawl round ${round}: not every IP was crawled and scheduled again` },
        );
      }
      // One pending crawl per IP, the one its chain names, in the IP's partition.
      const pending = await jobsOf('crawl', IN_FLIGHT);
      expect(pending.map((j) => j.data.ipId).sort((a, b) => a - b)).toEqual([...ipIds].sort((a, b) => a - b));
      for (const j of pending) {
        expect(j.queueName).toBe(`crawl.${j.data.ipId % SHARDS}-of-${SHARDS}`);
        expect((await api(0).get(`/api/ips/${j.data.ipId}`)).body.currentCrawl.taskId).toBe(j.id);
      }
    };

    const poolWork = async () => {
      const items = Array.from({ length: POOL_ROWS }, (_, n) => ({ text: `qp-row-${n}`, batchId: 1 }));
      const imported = await api(0).post('/api/pools/titles/21/items', { items });
      expect(imported.status, JSON.stringify(imported.body)).toBe(201);
      await waitFor(async () => (await poolOverview(api(1), 'titles', 21))?.poolLength === 40, { message: 'pool not filled after the import' });
      const drained = async () => {
        const o = await poolOverview(api(1), 'titles', 21);
        return o.poolLength === 0 && o.available === 0 && o.reserved <= o.pendingConsumed;
      };
      // Eight clients, four on each API process, popping one or three at a time until nothing is left.
      const client = async (index: number): Promise<Served[]> => {
        const got: Served[] = [];
        for (;;) {
          const many = index % 2 === 1;
          const res = many ? await api(index).post('/api/pools/titles/21/pop-many', { count: 3 }) : await api(index).post('/api/pools/titles/21/pop');
          expect([200, 404], JSON.stringify(res.body)).toContain(res.status);
          const served: Served[] = res.status === 200 ? (many ? res.body.items : [res.body]) : [];
          got.push(...served);
          if (served.length) continue;
          if (await drained()) return got;
          await sleep(50); // a refill is between its reserve and its push
        }
      };
      const served = (await Promise.all(Array.from({ length: 8 }, (_, i) => client(i)))).flat();
      expect(duplicates(served.map((s) => s.id))).toEqual([]);
      expect(served).toHaveLength(POOL_ROWS);
      // More than the first fill came from the pool: refills (pool-refill, in process B) ran while popping.
      const pooled = served.filter((s) => s.source === 'pool').length;
      console.log(`pool: ${pooled} of ${POOL_ROWS} rows served from the pool, ${POOL_ROWS - pooled} from the DB fallback`);
      expect(pooled).toBeGreaterThan(40);
      await waitFor(
        async () => (await sql.query(`SELECT count(*)::int AS n FROM titles WHERE group_id = 21 AND status = 'consumed'`)).rows[0].n === POOL_ROWS,
        { timeoutMs: 30_000, message: 'not every served row was marked consumed' },
      );
    };

    const sessions = sessionsCoveringShards(SHARDS, SESSIONS_PER_SHARD);
    const total = sessions.length * MESSAGES_PER_SESSION;
    const messageWork = async () => {
      // Each session's messages in order, the sessions side by side, alternating API processes.
      await Promise.all(
        sessions.map(async (session, s) => {
          for (let i = 0; i < MESSAGES_PER_SESSION; i++) {
            const res = await api(s + i).post(`/api/sessions/${session}/messages`, { role: i % 2 ? 'assistant' : 'user', content: `${session} #${i}` });
            expect(res.status, JSON.stringify(res.body)).toBe(201);
          }
        }),
      );
      const stored = async () =>
        (
          await sql.query(
            `SELECT count(*)::int AS n, count(DISTINCT message_id)::int AS ids, count(DISTINCT (session_id, content))::int AS texts FROM chat_messages WHERE session_id = ANY($1)`,
            [sessions],
          )
        ).rows[0] as { n: number; ids: number; texts: number };
      await waitFor(async () => (await stored()).n >= total, { timeoutMs: 30_000, message: 'messages not persisted' });
      // Every buffer drained and no drain running: nothing more can be written; each message is there once.
      await waitFor(
        async () =>
          (await Promise.all(Array.from({ length: SHARDS }, (_, s) => probe.llen(keys.messagePersistBuffer(s))))).every((n) => n === 0) &&
          (await jobsOf('messagePersist', ['active', 'waiting', 'prioritized'])).length === 0,
        { timeoutMs: 30_000, message: 'persist buffers not drained' },
      );
      expect(await stored()).toEqual({ n: total, ids: total, texts: total });
    };

    try {
      await Promise.all([feedsWork(), crawlWork(), poolWork(), messageWork()]);
    } finally {
      sampling = false;
      await sampler;
    }
    expect(seen).toEqual([]);
    expect(sampleErrors).toEqual([]);
    // The samples saw the work they check: every IP's crawl at once (over the six partitions), and
    // feeds with a manual refresh beside their periodic one.
    expect(samples).toBeGreaterThanOrEqual(10);
    expect(mostCrawls).toBe(IPS);
    expect(sawManualBesidePeriodic).toBeGreaterThan(0);
    console.log(`queue samples: ${samples}, of which ${sawManualBesidePeriodic} with a manual refresh beside a periodic one`);

    // Domain spacing, measured at the server, across both processes and every partition.
    for (const host of SPACED_HOSTS) {
      const at = server.requests
        .filter((r) => r.host === host)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(at.length).toBeGreaterThanOrEqual(2 * FEEDS_PER_HOST);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      expect(Math.min(...gaps), `gaps at ${host}: ${gaps.map((g) => g.toFixed(1)).join(', ')}`).toBeGreaterThanOrEqual(SPACING_MS);
    }
    // The feeds of one host sit in several partitions (the gate held across them).
    for (const h of SPACED_HOSTS.keys()) {
      const ids = feedIds.slice(h * FEEDS_PER_HOST, (h + 1) * FEEDS_PER_HOST);
      expect(new Set(ids.map((id) => id % SHARDS)).size).toBeGreaterThan(1);
    }
    for (const p of processes)
      expect(
        p
          .output()
          .split('\n')
          .filter((l) => CLUSTER_ERROR.test(l)),
      ).toEqual([]);
  }, 240_000);

  it('spreads the jobs of every partitioned family over all three masters, each partition in one slot; pools and maintenance in one slot each', async () => {
    const masters = cluster.nodes.map((n) => n.port);
    const layout = queues.layout;
    const targets = layout.all();
    expect(targets.every((t) => t.current)).toBe(true);
    const { where, perFamily, stray } = await queueKeyCensus(masters, targets, PREFIX);
    // Every key is the platform's (under its prefix) or a queue's of the current layout.
    expect(stray).toEqual([]);

    const table = [...perFamily].map(([family, byMaster]) => `${family}: ${masters.map((p) => `${p}=${byMaster.get(p) ?? 0}`).join(' ')}`);
    console.log(`BullMQ keys per family and master (QUEUE_SHARDS=${SHARDS}):\n  ${table.join('\n  ')}`);

    for (const t of targets) {
      const w = where.get(t);
      // Every queue of every family was used (feeds, IPs and buffers cover every partition).
      expect(w, `${t.prefix}:${t.name} has no keys`).toBeDefined();
      // One hash tag: one slot, on the master serving it.
      expect([...w!.slots], t.name).toHaveLength(1);
      expect([...w!.masters], t.name).toHaveLength(1);
      const slot = [...w!.slots][0]!;
      expect(await cluster.ownerOf(slot)).toBe([...w!.masters][0]);
    }
    for (const family of PARTITIONED_FAMILIES) {
      const byMaster = perFamily.get(family)!;
      expect(
        masters.map((p) => byMaster.get(p) ?? 0).every((n) => n > 0),
        `${family}: ${table.join('; ')}`,
      ).toBe(true);
      // Partition i of n sits in the i-th n-th of the slot space: n/3 partitions on each master.
      const keysOfFamily = (Object.keys(FAMILY_OF) as QueueKey[]).filter((k) => FAMILY_OF[k] === family);
      for (const key of keysOfFamily) {
        const parts = layout.current(key);
        expect(parts).toHaveLength(SHARDS);
        const perMaster = new Map<number, number>();
        for (const t of parts) {
          const m = [...where.get(t)!.masters][0]!;
          perMaster.set(m, (perMaster.get(m) ?? 0) + 1);
        }
        expect([...perMaster.values()], key).toEqual([SHARDS / 3, SHARDS / 3, SHARDS / 3]);
        // A flow's queues (crawl and crawl-result) share each partition's slot.
        if (key === 'crawlResult') for (const t of parts) expect(where.get(t)!.slots).toEqual(where.get(layout.sibling(t, 'crawl'))!.slots);
      }
    }
    for (const family of ['pools', 'maintenance'] as const) {
      const fam = targets.filter((t) => t.family === family);
      expect(fam.every((t) => t.count === 1)).toBe(true);
      expect(new Set(fam.flatMap((t) => [...where.get(t)!.slots])).size, family).toBe(1);
    }
  });

  it('answers the partitions in the job console: /api/queues per family with summed counts, tasks in any partition, dead refreshes of every partition', async () => {
    // Two feeds that fail for good (500 twice, FEED_ATTEMPTS=2): consecutive ids, so at least
    // one of them in a partition other than the first.
    const failing = await Promise.all([0, 1].map((i) => api(i).post('/api/feeds', { url: server.url(`/status/500?qp=${i}`) })));
    expect(failing.map((r) => r.status)).toEqual([201, 201]);
    const failingIds = failing.map((r) => r.body.id as number);
    const dead = await Promise.all(failing.map((r, i) => waitForTask(api(i), r.body.taskId, 60_000)));
    expect(dead.map((t) => t.state)).toEqual(['failed', 'failed']);
    expect(failingIds.some((id) => id % SHARDS !== 0)).toBe(true);

    // GET /api/queues: a partitioned queue answers its family, its six partitions and their sum.
    const list = await api(1).get('/api/queues');
    expect(list.status).toBe(200);
    const byName = new Map<string, any>(list.body.queues.map((q: any) => [q.name, q]));
    for (const [name, family] of [
      ['crawl', 'crawl'],
      ['crawl-result', 'crawl'],
      ['feed-refresh', 'feeds'],
      ['message-persist', 'messages'],
    ] as const) {
      const q = byName.get(name);
      expect(q, name).toBeDefined();
      expect(q.family).toBe(family);
      expect(q.partitions.map((p: { name: string }) => p.name)).toEqual(Array.from({ length: SHARDS }, (_, i) => `${name}.${i}-of-${SHARDS}`));
      for (const state of Object.keys(q.counts)) {
        expect(q.counts[state], `${name} ${state}`).toBe(
          q.partitions.reduce((sum: number, p: { counts: Record<string, number> }) => sum + p.counts[state]!, 0),
        );
      }
    }
    for (const name of ['pool-refill', 'pool-consumed', 'maintenance']) {
      expect(byName.get(name), name).toBeDefined();
      expect(byName.get(name).partitions).toBeUndefined();
    }
    // What the sums count: one pending crawl per IP and one pending refresh per feed, the two dead refreshes.
    const crawl = byName.get('crawl');
    expect(crawl.counts.delayed + crawl.counts.waiting + crawl.counts.prioritized + crawl.counts.active).toBe(IPS);
    const refresh = byName.get('feed-refresh');
    expect(refresh.counts.failed).toBe(2);
    expect(refresh.counts.delayed + refresh.counts.waiting + refresh.counts.prioritized + refresh.counts.active).toBe(feedIds.length + 2);
    for (const id of failingIds) expect(refresh.partitions[id % SHARDS].counts.failed).toBeGreaterThanOrEqual(1);

    // GET /api/tasks/:id finds jobs in partitions other than the first (feeds, crawls, results).
    const feedTask = feedTasks.find((t) => t.feedId % SHARDS !== 0)!;
    const feedView = await api(0).get(`/api/tasks/${feedTask.taskId}`);
    expect(feedView.status).toBe(200);
    expect(feedView.body).toMatchObject({ task_id: feedTask.taskId, queue: `feed-refresh.${feedTask.feedId % SHARDS}-of-${SHARDS}`, state: 'completed' });
    const crawlTask = crawlTasks.find((t) => t.ipId % SHARDS !== 0)!;
    const crawlView = await api(1).get(`/api/tasks/${crawlTask.taskId}`);
    expect(crawlView.status).toBe(200);
    expect(crawlView.body).toMatchObject({ task_id: crawlTask.taskId, queue: `crawl.${crawlTask.ipId % SHARDS}-of-${SHARDS}`, state: 'completed' });
    const resultView = await api(0).get(`/api/tasks/result-${crawlTask.taskId}`);
    expect(resultView.body).toMatchObject({ queue: `crawl-result.${crawlTask.ipId % SHARDS}-of-${SHARDS}`, state: 'completed' });
    expect((await api(0).get('/api/tasks/feed-999999-nothing')).status).toBe(404);

    // The dead-job console: queue=feed-refresh covers every partition.
    const deadRefreshes = await api(1).get('/api/dead-jobs?queue=feed-refresh');
    expect(deadRefreshes.status).toBe(200);
    expect(deadRefreshes.body.total).toBe(2);
    expect(
      deadRefreshes.body.jobs.map((j: { data: { feedId: number }; queue: string }) => [j.data.feedId, j.queue]).sort((a: [number], b: [number]) => a[0] - b[0]),
    ).toEqual(failingIds.sort((a, b) => a - b).map((id) => [id, `feed-refresh.${id % SHARDS}-of-${SHARDS}`]));
    for (const j of deadRefreshes.body.jobs) expect(j.failedReason).toMatch(/500/);
    // One partition alone, and the console of every queue.
    const other = failingIds.find((id) => id % SHARDS !== 0)!;
    const one = await api(0).get(`/api/dead-jobs?queue=feed-refresh.${other % SHARDS}-of-${SHARDS}`);
    expect(one.body.jobs.map((j: { data: { feedId: number } }) => j.data.feedId)).toContain(other);
    const all = await api(0).get('/api/dead-jobs');
    expect(
      all.body.jobs
        .filter((j: { queue: string }) => j.queue.startsWith('feed-refresh.'))
        .map((j: { data: { feedId: number } }) => j.data.feedId)
        .sort((a: number, b: number) => a - b),
    ).toEqual(failingIds);
  });
});
