/**
 * Benchmark of the crawler (`npm run bench:crawler`).
 *
 * Workload: BENCH_CRAWL_JOBS crawl jobs (default 4) of 5 on-sale + 5 sold pages each on the
 * fixture marketplace, 120 items per page in a virtual list: 40 pages, 4,800 items a run.
 *
 * Crawler: the crawler role in this process (startPlatform: BullMQ worker, Redis, stealth,
 * resource blocking, human-like activity on each job's first page, proxy-breaker reads,
 * the crawl's flow opened and its result returned to the parent) at CRAWLER_CONCURRENCY 1, 2 and 4,
 * with a warmed-up browser.
 * Baseline in the same run, same pages: a bare puppeteer loop (no stealth, no resource blocking,
 * no queue) with the same number of pages open at once, each page in its own window like the
 * crawler's (hidden tabs do not render), reading the list with the same in-page scripts.
 * Reported: pages/s, items/s, speed-up over concurrency 1, crawler/bare ratio (target >= 0.8),
 * peak memory of the Chromium process tree (browser + renderers + helpers) as summed RSS
 * (counts shared pages once per process) and summed PSS (shares them out).
 *
 * Recycle cost: the concurrency-2 run again with CRAWLER_PAGES_PER_BROWSER=5 (a drained recycle
 * every 5 pages), the extra seconds per recycle, and the bare launch + close time of a browser.
 *
 * Starts its own fixture marketplace, redis-server and PostgreSQL cluster; removes them afterwards.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser } from 'puppeteer';
import { loadConfig } from '../src/config/index.js';
import { createFixtureAdapter } from '../src/crawl/adapters/fixture.js';
import { readRowsScript, scrollOneScreenScript } from '../src/crawl/browser-scripts.js';
import { FixtureMarketplace } from '../src/services/fixture-marketplace/server.js';
import { CHROMIUM_ARGS, launchBrowser, VIEWPORT } from '../src/crawl/launch-browser.js';
import type { CrawledItem } from '../src/queues/declarations/crawl.js';
import { startPlatform } from '../src/runtime/start-platform.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import type { ItemStatus, RawRow } from '../src/crawl/site-adapter.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';

const JOBS = Number(process.env.BENCH_CRAWL_JOBS ?? 4);
const PAGES_PER_STATUS = 5;
const ITEMS_PER_PAGE = 120;
const CONCURRENCIES = [1, 2, 4];
const SCROLL_WAIT_MS = 2000;
const NETWORK_IDLE_MS = 100;
const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';

interface RunResult {
  seconds: number;
  pages: number;
  items: number;
  peak: TreeMemory;
  /** Browser launches at recycles and their mean duration (crawler only). */
  recycles?: { count: number; meanMs: number };
}

// ---- Chromium process tree RSS -------------------------------------------------------------

function processTable(): Map<number, { ppid: number; args: string[] }> {
  const table = new Map<number, { ppid: number; args: string[] }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      table.set(Number(entry), { ppid, args: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0') });
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/** RSS and PSS of a process in kB (PSS shares the pages several processes map among them). */
function memoryKb(pid: number): { rss: number; pss: number } {
  const field = (text: string, name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  try {
    return { rss: field(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'), pss: field(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss') };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

interface TreeMemory {
  rssMb: number;
  pssMb: number;
}

/** Memory (MB) of the Chromium browsers whose profile lies under `profileRoot`, with all their children. */
function chromiumTreeMemory(profileRoot: string): TreeMemory {
  const table = processTable();
  const roots = [...table]
    .filter(([, p]) => p.args.some((a) => a.startsWith(`--user-data-dir=${profileRoot}`)) && !p.args.some((a) => a.startsWith('--type=')))
    .map(([pid]) => pid);
  const tree = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of table) {
      if (!tree.has(pid) && tree.has(p.ppid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  let rss = 0;
  let pss = 0;
  for (const pid of tree) {
    const m = memoryKb(pid);
    rss += m.rss;
    pss += m.pss;
  }
  return { rssMb: rss / 1024, pssMb: pss / 1024 };
}

function sampleMemory(profileRoot: string): { stop(): TreeMemory } {
  const peak: TreeMemory = { rssMb: 0, pssMb: 0 };
  const sample = () => {
    const m = chromiumTreeMemory(profileRoot);
    peak.rssMb = Math.max(peak.rssMb, m.rssMb);
    peak.pssMb = Math.max(peak.pssMb, m.pssMb);
  };
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

// ---- the crawler ------------------------------------------------------------------------------

async function crawlerRun(
  label: string,
  concurrency: number,
  pagesPerBrowser: number,
  deps: { redisUrl: string; dbUrl: string; marketUrl: string },
): Promise<RunResult> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-crawl-'));
  const prefix = `bench${label.replace(/[^a-z0-9]/gi, '')}`;
  const config = loadConfig({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    REDIS_URL: deps.redisUrl,
    REDIS_PREFIX: prefix,
    DATABASE_URL: deps.dbUrl,
    DATABASE_POOL_SIZE: '2',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    LOG_PRETTY: 'false',
    CRAWL_SITE: 'fixture',
    CRAWL_BASE_URL: deps.marketUrl,
    CRAWLER_CONCURRENCY: String(concurrency),
    CRAWLER_PAGES_PER_BROWSER: String(pagesPerBrowser),
    CRAWLER_SCROLL_DELAY_MS: String(SCROLL_WAIT_MS),
    CRAWLER_NETWORK_IDLE_MS: String(NETWORK_IDLE_MS),
    CRAWLER_PAGE_TIMEOUT_MS: '60000',
    WORKER_SHUTDOWN_GRACE_MS: '5000',
  });
  const platform = await startPlatform({ roles: ['crawler'], config });
  const crawl = platform.ctx.queues.queue('crawl');
  const waitDone = async (count: number) => {
    for (;;) {
      const c = await crawl.getJobCounts('completed', 'failed');
      if ((c.failed ?? 0) > 0) throw new Error(`${label}: a crawl job failed: ${(await crawl.getFailed())[0]?.failedReason}`);
      if ((c.completed ?? 0) >= count) return;
      await sleep(50);
    }
  };
  try {
    // warm-up: the browser is started by the first page
    await platform.ctx.queues.add('crawl', 'warmup', { ipId: 1, keyword: 'warmup', taskId: `${prefix}-warmup`, pagesOnSale: 1, pagesSold: 0 });
    await waitDone(1);

    const memory = sampleMemory(path.join(dataDir, 'chromium'));
    const started = performance.now();
    await platform.ctx.queues.addBulk(
      'crawl',
      Array.from({ length: JOBS }, (_, i) => ({
        name: 'bench',
        data: { ipId: i + 1, keyword: `bench-${i}`, taskId: `${prefix}-${i}`, pagesOnSale: PAGES_PER_STATUS, pagesSold: PAGES_PER_STATUS },
      })),
    );
    await waitDone(JOBS + 1);
    const seconds = (performance.now() - started) / 1000;
    const peak = memory.stop();
    const done = (await crawl.getCompleted()).filter((j) => j.name === 'bench');
    const items = done.reduce((sum, j) => sum + (j.returnvalue as { items: unknown[] }).items.length, 0);
    const errors = done.reduce((sum, j) => sum + (j.returnvalue as { errors: unknown[] }).errors.length, 0);
    if (items !== JOBS * 2 * PAGES_PER_STATUS * ITEMS_PER_PAGE || errors) throw new Error(`${label}: ${items} items, ${errors} page errors`);
    const launches = (await platform.ctx.metrics.registry.getSingleMetric('wp_crawler_browser_launch_seconds')!.get()).values;
    const pick = (suffix: string) =>
      launches.find((v) => (v as { metricName?: string }).metricName === `wp_crawler_browser_launch_seconds_${suffix}` && v.labels.reason === 'recycle')
        ?.value ?? 0;
    const count = pick('count');
    return { seconds, pages: JOBS * 2 * PAGES_PER_STATUS, items, peak, recycles: { count, meanMs: count ? (pick('sum') / count) * 1000 : 0 } };
  } finally {
    await platform.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- the bare puppeteer loop ------------------------------------------------------------------

async function barePage(browser: Browser, url: string, status: ItemStatus, adapter: ReturnType<typeof createFixtureAdapter>): Promise<number> {
  const page = await browser.newPage({ type: 'window' });
  try {
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForNetworkIdle({ idleTime: NETWORK_IDLE_MS, timeout: NETWORK_IDLE_MS * 5 }).catch(() => undefined);
    const read = readRowsScript(adapter.selectors);
    const scroll = scrollOneScreenScript(adapter.selectors.row, SCROLL_WAIT_MS);
    const seen = new Set<string>();
    let stale = 0;
    for (;;) {
      const before = seen.size;
      for (const raw of (await page.evaluate(read)) as RawRow[]) {
        const item: CrawledItem | null = adapter.parseRow(raw, status);
        if (item && seen.size < ITEMS_PER_PAGE) seen.add(item.sourceId);
      }
      stale = seen.size > before ? 0 : stale + 1;
      if (seen.size >= ITEMS_PER_PAGE || stale >= 3) break;
      await page.evaluate(scroll);
    }
    return seen.size;
  } finally {
    await page.close();
  }
}

async function bareRun(concurrency: number, marketUrl: string): Promise<RunResult> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-bare-'));
  const adapter = createFixtureAdapter(marketUrl);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    userDataDir: profile,
    defaultViewport: VIEWPORT,
    args: [...CHROMIUM_ARGS, `--window-size=${VIEWPORT.width},${VIEWPORT.height}`],
  });
  try {
    await barePage(browser, adapter.searchUrl('warmup', 'on_sale', 1), 'on_sale', adapter);
    const work: { url: string; status: ItemStatus }[] = [];
    for (let i = 0; i < JOBS; i++) {
      for (const status of ['on_sale', 'sold'] as const) {
        for (let p = 1; p <= PAGES_PER_STATUS; p++) work.push({ url: adapter.searchUrl(`bench-${i}`, status, p), status });
      }
    }
    const memory = sampleMemory(profile);
    const started = performance.now();
    let items = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < work.length) {
          const w = work[next++]!;
          const read = await barePage(browser, w.url, w.status, adapter);
          items += read;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const peak = memory.stop();
    if (items !== work.length * ITEMS_PER_PAGE) throw new Error(`bare loop read ${items} items`);
    return { seconds, pages: work.length, items, peak };
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

async function launchCloseMs(): Promise<number> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-launch-'));
  const times: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const { browser } = await launchBrowser({ chromiumPath: CHROMIUM, profileRoot: root, proxy: null, protocolTimeoutMs: 30_000 });
      await browser.close();
      times.push(performance.now() - started);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return times.sort((a, b) => a - b)[1]!;
}

// ---- main ---------------------------------------------------------------------------------------

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const market = await FixtureMarketplace.start({ itemsPerPage: ITEMS_PER_PAGE, pages: PAGES_PER_STATUS });
  const redisDir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-redis-'));
  const redis = await startRedisServer({ dir: redisDir });
  const pgCluster = await startPostgresCluster();
  const deps = { redisUrl: redis.url, dbUrl: pgCluster.url, marketUrl: market.url };
  console.log(
    `crawler benchmark: ${JOBS} jobs x (${PAGES_PER_STATUS} on-sale + ${PAGES_PER_STATUS} sold pages) x ${ITEMS_PER_PAGE} items = ${JOBS * 2 * PAGES_PER_STATUS} pages, ${JOBS * 2 * PAGES_PER_STATUS * ITEMS_PER_PAGE} items per run; ${os.cpus().length} cores\n`,
  );
  try {
    const rows: { c: number; crawler: RunResult; bare: RunResult }[] = [];
    for (const c of CONCURRENCIES) {
      const crawler = await crawlerRun(`c${c}`, c, 1000, deps);
      const bare = await bareRun(c, market.url);
      rows.push({ c, crawler, bare });
      console.log(`  concurrency ${c}: crawler ${f1(crawler.seconds)} s, bare loop ${f1(bare.seconds)} s`);
    }
    const base = rows[0]!;
    console.log(
      '\n| concurrency | crawler pages/s | crawler items/s | speed-up | bare pages/s | bare items/s | speed-up | crawler / bare | peak memory crawler / bare, MB RSS (PSS) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const cp = r.crawler.pages / r.crawler.seconds;
      const bp = r.bare.pages / r.bare.seconds;
      console.log(
        `| ${r.c} | ${f2(cp)} | ${Math.round(r.crawler.items / r.crawler.seconds)} | ${f2(base.crawler.seconds / r.crawler.seconds)}x | ${f2(bp)} | ${Math.round(r.bare.items / r.bare.seconds)} | ${f2(base.bare.seconds / r.bare.seconds)}x | ${f2(cp / bp)}x | ${Math.round(r.crawler.peak.rssMb)} (${Math.round(r.crawler.peak.pssMb)}) / ${Math.round(r.bare.peak.rssMb)} (${Math.round(r.bare.peak.pssMb)}) |`,
      );
    }

    const recycling = await crawlerRun('recycle', 2, 5, deps);
    const plain = rows.find((r) => r.c === 2)!.crawler;
    const recycles = recycling.recycles!;
    const launchClose = await launchCloseMs();
    console.log(
      `\nrecycle: concurrency 2 with a recycle every 5 pages (${recycles.count} recycles): ${f1(recycling.seconds)} s vs ${f1(plain.seconds)} s without;`,
    );
    console.log(
      `  ${f2(recycling.pages / recycling.seconds / (plain.pages / plain.seconds))}x the throughput, ${Math.round(((recycling.seconds - plain.seconds) / Math.max(1, recycles.count)) * 1000)} ms of wall time per recycle;`,
    );
    console.log(
      `  new pages wait ${Math.round(recycles.meanMs)} ms (mean launch of the next browser); peak ${Math.round(recycling.peak.rssMb)} MB RSS (${Math.round(recycling.peak.pssMb)} PSS) with two browsers while one drains`,
    );
    console.log(`  launch + close of a stealth browser alone: ${Math.round(launchClose)} ms (median of 3)`);
  } finally {
    await pgCluster.stop();
    await redis.stop();
    rmSync(redisDir, { recursive: true, force: true });
    await market.stop();
  }
}

await main();
