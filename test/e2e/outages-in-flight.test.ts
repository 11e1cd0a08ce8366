/**
 * Issue 24 end to end: `npm start` (embedded redis-server and PostgreSQL, default settings but
 * what a user would set) with work in flight the whole time meets four outages one after another,
 * and nobody restarts anything by hand:
 *
 *   1. the embedded redis-server frozen (SIGSTOP) for E2E_OUTAGE_FREEZE_MS (60 s);
 *   2. the embedded PostgreSQL frozen (its postmaster and every backend) for as long;
 *   3. the redis-server killed (SIGKILL): the owner starts it again (AOF replayed);
 *   4. the postmaster killed (SIGKILL): the owner starts it again (crash recovery).
 *
 * The work (support/workload.ts): message writers recording every message answered 201; feeds on a
 * loopback feed server refreshing every minute and triggered every few seconds; IPs on a fixture
 * marketplace triggered over and over; pool rows popped by clients that record every row served.
 * The marketplace is served here, not the demo one `npm start` serves (whose market trades once
 * every 5 minutes): it trades every 5 s, so nearly every crawl result counts inflow and outflow,
 * and a result counted twice would show in the IP's stats.
 *
 * Each outage begins while a crawl runs. After each: /readyz back to 200; no dead job; every
 * acknowledged message readable, in the order sent, once; every feed and IP with exactly one
 * pending refresh or crawl; every IP's hourly stats equal to what its item snapshots say was
 * counted (each result counted once: a result counted twice adds its inflow and outflow again, its
 * snapshots do not change); no pool row served twice (the rows of a pop in flight when the
 * redis-server dies may have been taken, which nobody can tell: counted in doubt and logged, the
 * documented limit, and only then); and no request of the work answered otherwise than an outage
 * allows. At the end, with the work stopped: the same, each chain at rest
 * with exactly one pending job, jobs delayed for the outages (none failed for them), each embedded
 * service restarted once. Printed: the counts and the work's request latency by phase.
 * E2E_LOG_FILE=<path> keeps the platform's output there (to read after a failure).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { freezeProcessTree } from '../support/process-tree.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type LogLine, type ProductProcess } from './support/product.js';
import { latencyByPhase, Workload } from './support/workload.js';

const FREEZE_MS = Number(process.env.E2E_OUTAGE_FREEZE_MS ?? 60_000);
const FEEDS = 4;
const IPS = 3;
const POOLS = { 'titles/1': 10_000, 'contents/2': 6_000 };
const PENDING = ['delayed', 'waiting', 'prioritized', 'active'];
const RECOVERY_MS = 120_000;
const PHASE_TIMEOUT_MS = FREEZE_MS + 6 * RECOVERY_MS;
/** The error line of a pop cut off by a dropped Redis connection (src/pools/pop-items.ts). */
const IN_DOUBT = /^the Redis connection dropped while a pool pop/;

interface Item {
  status: 'on_sale' | 'sold';
  firstSeenAt: string;
  soldAt: string | null;
}
interface Stat {
  inflow: number;
  outflow: number;
}
interface Metric {
  name: string;
  labels: Record<string, string>;
  value: number;
}

describe('npm start with work in flight through Redis and PostgreSQL outages', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-outages-in-flight-'));
  const expectations = new Expectations();
  const figures: string[] = [];
  let feedServer: FeedServer;
  let market: FixtureMarketplace;
  let product: ProductProcess;
  let api: ApiClient;
  let work: Workload;
  let thaw: (() => void) | undefined;
  /** The log lines of the redis-killed phase: [from, to). */
  const killedRedis = { from: Infinity, to: -Infinity };
  const feedIds: number[] = [];
  const ipIds: number[] = [];

  const redisPid = () => Number(readFileSync(path.join(dataDir, 'redis/redis.pid'), 'utf8').trim());
  const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postgres/data/postmaster.pid'), 'utf8').split('\n')[0]);
  const ready = async () => (await api.get('/readyz')).status === 200;

  async function metrics(): Promise<Metric[]> {
    const text = (await api.get('/metrics')).body as string;
    return text.split('\n').flatMap((l) => {
      const m = /^(wp_[a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) return [];
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
      return [{ name: m[1]!, labels, value: Number(m[3]) }];
    });
  }
  const sum = (all: Metric[], name: string, labels: Record<string, string> = {}) =>
    all.filter((m) => m.name === name && Object.entries(labels).every(([k, v]) => m.labels[k] === v)).reduce((n, m) => n + m.value, 0);

  /** Distinct jobs of `queue` in the pending states and active (read state by state). */
  async function pendingJobs(queue: string): Promise<{ id: string; data: Record<string, unknown> }[]> {
    const jobs = new Map<string, { id: string; data: Record<string, unknown> }>();
    for (const state of PENDING) {
      const res = await api.get(`/api/queues/${queue}/jobs?state=${state}&start=0&end=999`);
      if (res.status !== 200) throw new Error(`${queue} ${state}: ${res.status}`);
      for (const job of res.body.jobs) jobs.set(job.id, job);
    }
    return [...jobs.values()];
  }

  async function listJobs(queue: string, state: string): Promise<{ id: string; returnValue?: any }[]> {
    const out = [];
    for (let start = 0; ; start += 1000) {
      const res = await api.get(`/api/queues/${queue}/jobs?state=${state}&start=${start}&end=${start + 999}`);
      if (res.status !== 200) throw new Error(`${queue} ${state}: ${res.status}`);
      out.push(...res.body.jobs);
      if (res.body.jobs.length < 1000) return out;
    }
  }

  /** Each acknowledged message readable, in the order sent, once; nothing there that was not sent. */
  async function messagesIntact(): Promise<void> {
    for (const writer of work.writers) {
      for (const session of writer.sessions) {
        const acknowledged = [...session.acknowledged];
        const read = await waitFor(
          async () => {
            const res = await api.get(`/api/sessions/${session.id}/messages?limit=1000`);
            return res.status === 200 ? (res.body.messages as { content: string }[]) : undefined;
          },
          { timeoutMs: RECOVERY_MS, intervalMs: 250, message: `session ${session.id} readable` },
        );
        // Sent before the read ended, whatever the answer: one answered 503 may still have been
        // stored (its outcome is unknown), and may show.
        const sent = new Set(session.sent);
        const indexes = read.map((m) => Number(m.content.slice(writer.writer.length + 1)));
        const problems = [
          ...read.filter((m, i) => !m.content.startsWith(`${writer.writer}:`) || !sent.has(indexes[i]!)).map((m) => `not sent: ${m.content}`),
          ...indexes.filter((n, i) => i > 0 && n <= indexes[i - 1]!).map((n) => `out of order or twice: ${n}`),
          ...acknowledged.filter((n) => !indexes.includes(n)).map((n) => `acknowledged, missing: ${n}`),
        ];
        expect(problems, `session ${session.id}`).toEqual([]);
      }
    }
  }

  /** Exactly one pending (or running) refresh per feed and crawl per IP, each seen at least once. */
  async function chainsWhole(): Promise<void> {
    const seenOne = new Set<string>();
    let last: Record<string, number> = {};
    await waitFor(
      async () => {
        const refreshes = await pendingJobs('feed-refresh');
        const crawls = await pendingJobs('crawl');
        last = {};
        for (const id of feedIds) last[`feed ${id}`] = refreshes.filter((j) => j.data.feedId === id).length;
        for (const id of ipIds) last[`ip ${id}`] = crawls.filter((j) => j.data.ipId === id).length;
        for (const [key, n] of Object.entries(last)) if (n === 1) seenOne.add(key);
        return seenOne.size === feedIds.length + ipIds.length;
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 250, message: 'every feed and IP with exactly one pending refresh or crawl' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; pending by chain at the last look: ${JSON.stringify(last)}`);
    });
  }

  /**
   * What an IP's item snapshots say its counted results added up to: each item first seen on sale
   * after its first crawl (the baseline, which counts nothing) is one inflow; each item sold after it
   * one outflow (the fixture market never relists).
   */
  function countedFromItems(items: Item[]): Stat {
    const t0 = items.map((i) => i.firstSeenAt).sort()[0];
    return {
      inflow: items.filter((i) => i.firstSeenAt > t0! && !(i.status === 'sold' && i.soldAt === i.firstSeenAt)).length,
      outflow: items.filter((i) => i.status === 'sold' && i.soldAt !== null && i.soldAt > t0!).length,
    };
  }

  /** Every IP's hourly stats equal what its snapshots say was counted: each result counted once. */
  async function resultsCountedOnce(): Promise<void> {
    for (const id of ipIds) {
      let mismatch = '';
      const stats = async () => {
        const res = await api.get(`/api/ips/${id}`);
        if (res.status !== 200) return undefined;
        const rows = res.body.hourlyStats as Stat[];
        return { inflow: rows.reduce((n, s) => n + s.inflow, 0), outflow: rows.reduce((n, s) => n + s.outflow, 0) };
      };
      await waitFor(
        async () => {
          const before = await stats();
          const items: Item[] = [];
          for (let offset = 0; ; offset += 500) {
            const res = await api.get(`/api/ips/${id}/items?limit=500&offset=${offset}`);
            if (res.status !== 200) return undefined;
            items.push(...res.body.items);
            if (res.body.items.length < 500) break;
          }
          const after = await stats();
          // A result committed meanwhile: look again.
          if (!before || JSON.stringify(before) !== JSON.stringify(after)) return undefined;
          const expected = countedFromItems(items);
          mismatch = `hourly stats ${JSON.stringify(after)}, item snapshots ${JSON.stringify(expected)}`;
          return JSON.stringify(after) === JSON.stringify(expected);
        },
        { timeoutMs: RECOVERY_MS, intervalMs: 500, message: `IP ${id}'s results counted once` },
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${mismatch}`);
      });
    }
  }

  /** The checks after each outage, with the work still going on. */
  async function verify(outage: string): Promise<void> {
    await waitFor(ready, { timeoutMs: RECOVERY_MS, message: `ready again after ${outage}` });
    work.phase = 'steady';
    const dead = (await api.get('/api/dead-jobs')).body;
    expect(dead.jobs, `dead jobs after ${outage}`).toEqual([]);
    await messagesIntact();
    await chainsWhole();
    await resultsCountedOnce();
    const ids = work.served.map((s) => `${s.pool}#${s.id}`);
    expect(ids.length - new Set(ids).size, `pool rows served twice after ${outage}`).toBe(0);
    expect(work.complaints, `answers an outage does not allow, after ${outage}`).toEqual([]);
  }

  /** Waits for a log line written after the first `from` lines. */
  const logged = (from: number, matches: (l: LogLine) => boolean, message: string) =>
    waitFor(() => product.lines().slice(from).find(matches), { timeoutMs: RECOVERY_MS, message });

  beforeAll(async () => {
    feedServer = await startFeedServer();
    market = await FixtureMarketplace.start({ seed: 'outages-in-flight', activity: { everyMs: 5000, sold: 2, listed: 3 }, control: false });
    product = await startProduct({
      dataDir,
      port: await freePort(),
      env: {
        OUTBOUND_ALLOW: '127.0.0.0/8', // the feed server is on loopback
        CRAWL_BASE_URL: market.url,
        SCHEDULER_PAGES_ON_SALE: '1',
        SCHEDULER_PAGES_SOLD: '1',
        CRAWLER_HUMANIZE: 'false',
      },
    });
    api = await adminClient(product.url!);

    for (let i = 0; i < FEEDS; i++) {
      const res = await api.post('/api/feeds', { url: feedServer.url(`/rss/outage-${i}.xml?items=5`), refreshIntervalMinutes: 1 });
      expect(res.status).toBe(201);
      feedIds.push(res.body.id);
    }
    for (let i = 0; i < IPS; i++) {
      const res = await api.post('/api/ips', { name: `outage ${i}`, keyword: `outage-${i}` });
      expect(res.status).toBe(201);
      ipIds.push(res.body.id);
    }
    for (const [pool, rows] of Object.entries(POOLS)) {
      const items = Array.from({ length: rows }, (_, i) => ({ text: `${pool} row ${i}`, batchId: Math.floor(i / 1000) }));
      expect((await api.post(`/api/pools/${pool}/items`, { items })).body).toEqual({ inserted: rows });
    }
    // Each IP's first crawl (the baseline), each feed's first refresh.
    await waitFor(async () => (await Promise.all(ipIds.map(async (id) => (await api.get(`/api/ips/${id}`)).body.lastCrawledAt))).every(Boolean), {
      timeoutMs: 240_000,
      intervalMs: 500,
      message: 'the first crawl of every IP',
    });
    await waitFor(async () => (await Promise.all(feedIds.map(async (id) => (await api.get(`/api/feeds/${id}`)).body.status))).every((s) => s === 'ok'), {
      timeoutMs: 60_000,
      message: 'the first refresh of every feed',
    });

    work = new Workload({
      baseUrl: api.baseUrl,
      token: api.token!,
      tag: 'outage',
      writers: 3,
      feedIds,
      ipIds,
      pools: Object.keys(POOLS),
      poppers: 3,
    });
    work.phase = 'steady';
    work.start();
    await waitFor(() => work.writers.every((w) => w.sessions[0]!.acknowledged.length >= 10) && work.served.length >= 50, {
      timeoutMs: 60_000,
      message: 'the work under way',
    });
  }, 420_000);

  afterAll(async () => {
    thaw?.();
    await work?.stop();
    console.log(`npm start with work in flight, request latency of the work by phase:\n  ${latencyByPhase(work?.timings ?? []).join('\n  ')}`);
    console.log(`counts:\n  ${figures.join('\n  ')}`);
    await product?.stop();
    if (process.env.E2E_LOG_FILE) writeFileSync(process.env.E2E_LOG_FILE, product?.output() ?? '');
    await market?.stop();
    await feedServer?.stop();
    await removeDataDir(dataDir);
  });

  /** Waits for a crawl to be running (Chromium on a page), so that one is in flight when the outage begins. */
  const crawlRunning = () =>
    waitFor(async () => (await api.get('/api/queues/crawl/jobs?state=active&start=0&end=0')).body.jobs?.length > 0, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 200,
      message: 'a crawl running',
    });

  /** Freezes the process tree of `pid` for FREEZE_MS, then thaws it and checks. */
  async function freeze(outage: string, pid: () => number): Promise<void> {
    await crawlRunning();
    work.phase = outage;
    thaw = freezeProcessTree(pid());
    await new Promise((resolve) => setTimeout(resolve, FREEZE_MS)); // the outage's length: the scenario, not a wait for a state
    thaw();
    thaw = undefined;
    await verify(outage);
  }

  it(`rides out the embedded Redis frozen for ${FREEZE_MS / 1000} s`, () => freeze('redis frozen', redisPid), PHASE_TIMEOUT_MS);

  it(`rides out the embedded PostgreSQL frozen for ${FREEZE_MS / 1000} s`, () => freeze('postgres frozen', postmasterPid), PHASE_TIMEOUT_MS);

  it(
    'rides out its redis-server killed: restarted by the owner, nothing lost',
    async () => {
      expectations.expectError(/^embedded redis-server exited unexpectedly/);
      // A pop in flight when the server dies may have run or not, and nobody can tell: its rows
      // are counted in doubt and logged at error level, never served twice (docs/known-limits.md).
      // The last test checks that only this phase logged such lines and that the metric counts them.
      expectations.expectError(IN_DOUBT);
      await crawlRunning();
      const from = product.lines().length;
      killedRedis.from = from;
      work.phase = 'redis killed';
      process.kill(redisPid(), 'SIGKILL');
      await logged(from, (l) => l.msg === 'embedded redis-server restarted', 'the redis-server restarted');
      await verify('redis killed');
      killedRedis.to = product.lines().length;
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'rides out its PostgreSQL killed: restarted by the owner, nothing lost',
    async () => {
      expectations.expectError(/^embedded PostgreSQL exited unexpectedly/);
      await crawlRunning();
      const from = product.lines().length;
      work.phase = 'postgres killed';
      process.kill(postmasterPid(), 'SIGKILL');
      await logged(from, (l) => l.msg === 'embedded PostgreSQL restarted', 'PostgreSQL restarted');
      await verify('postgres killed');
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'ends with the work whole: every chain, message, result and row, and the counts',
    async () => {
      await work.stop();
      await verify('the end');
      // With nothing triggering any more, every chain holds exactly one pending job, twice in a row.
      let calm = 0;
      await waitFor(
        async () => {
          const refreshes = await pendingJobs('feed-refresh');
          const crawls = await pendingJobs('crawl');
          const one =
            feedIds.every((id) => refreshes.filter((j) => j.data.feedId === id).length === 1) &&
            ipIds.every((id) => crawls.filter((j) => j.data.ipId === id).length === 1);
          calm = one ? calm + 1 : 0;
          return calm >= 2;
        },
        { timeoutMs: RECOVERY_MS, intervalMs: 1000, message: 'exactly one pending job per chain, at rest' },
      );

      const m = await metrics();
      const results = await listJobs('crawl-result', 'completed');
      const byStatus: Record<string, number> = {};
      for (const r of results) {
        const status = r.returnValue?.baseline ? 'baseline' : String(r.returnValue?.status);
        byStatus[status] = (byStatus[status] ?? 0) + 1;
      }
      expect(Object.keys(byStatus).filter((s) => !['baseline', 'processed', 'duplicate'].includes(s))).toEqual([]);
      const delays = m.filter((x) => x.name === 'wp_jobs_delayed_total' && x.value > 0);
      const byReason = (reason: string) => delays.filter((x) => x.labels.reason === reason).reduce((n, x) => n + x.value, 0);
      const outageDelays = delays.filter((x) => x.labels.reason === 'outage');
      const acknowledged = work.writers.reduce((n, w) => n + w.sessions.reduce((k, s) => k + s.acknowledged.length, 0), 0);
      const restarts = {
        redis: sum(m, 'wp_embedded_service_restarts_total', { service: 'redis' }),
        postgres: sum(m, 'wp_embedded_service_restarts_total', { service: 'postgres' }),
      };
      const counted = sum(m, 'wp_pipeline_results_total', { status: 'processed' }) + sum(m, 'wp_pipeline_results_total', { status: 'baseline' });
      figures.push(
        `messages acknowledged ${acknowledged} (${work.writers.length} writers); pool rows served ${work.served.length}, none twice`,
        `refreshes completed ${sum(m, 'wp_jobs_completed_total', { queue: 'feed-refresh' })} (triggers accepted ${work.triggered.feeds}); crawls completed ${sum(m, 'wp_jobs_completed_total', { queue: 'crawl' })} (triggers accepted ${work.triggered.crawls})`,
        `crawl results by outcome: ${JSON.stringify(byStatus)}; pipeline counter ${JSON.stringify(Object.fromEntries(m.filter((x) => x.name === 'wp_pipeline_results_total').map((x) => [x.labels.status, x.value])))}`,
        `jobs delayed by reason: ${['outage', 'turn', 'blocked', 'delayed'].map((r) => `${r} ${byReason(r)}`).join(', ')}; for an outage by queue: ${outageDelays.map((x) => `${x.labels.queue} ${x.value}`).join(', ')}`,
        `stalled jobs handed back: ${product.lines().filter((l) => l.msg === 'stalled job handed back to the queue').length}; embedded restarts ${JSON.stringify(restarts)}`,
      );
      // Pool rows in doubt: only from pops cut off by the redis-server's death, each logged, all counted.
      const inDoubt = product
        .lines()
        .map((line, at) => ({ line, at }))
        .filter(({ line }) => IN_DOUBT.test(line.msg));
      expect(inDoubt.filter(({ at }) => at < killedRedis.from || at >= killedRedis.to)).toEqual([]);
      expect(sum(m, 'wp_pool_rows_in_doubt_total')).toBe(inDoubt.reduce((n, { line }) => n + Number(line.rows), 0));
      figures.push(`pool rows in doubt (pops cut off by the redis-server's death): ${sum(m, 'wp_pool_rows_in_doubt_total')}`);
      // The outages were met by jobs (not only by requests), and no result was counted by two runs.
      expect(byReason('outage')).toBeGreaterThan(0);
      expect(counted).toBeLessThanOrEqual(results.length);
      expect(restarts).toEqual({ redis: 1, postgres: 1 });
    },
    PHASE_TIMEOUT_MS,
  );

  it('logged no error and failed no job that the test did not cause', () => {
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
