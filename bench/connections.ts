/**
 * Benchmark of the API's connection limits (`npm run bench:connections`): /healthz latency while
 * 20,000 connections from loopback flood the api role, which runs with its default settings in a
 * process of its own:
 *
 *   idle, one address      20,000 connections from 127.0.0.1 that send nothing (the checker's own
 *                          address: HTTP_MAX_CONNECTIONS_PER_ADDRESS holds it at 256)
 *   idle, 200 addresses    20,000 from 127.0.1.1-127.0.1.200, 100 each (HTTP_MAX_CONNECTIONS, 10,000)
 *   slow headers           20,000 from 200 addresses that send a request's first line and a header,
 *                          never the end of the headers (closed by HTTP_HEADERS_TIMEOUT_MS, 10 s)
 *   as before              the slow-header flood with no caps (HTTP_MAX_CONNECTIONS=1000000,
 *                          HTTP_FD_RESERVE=0, no per-address cap) and node's timeouts (headers
 *                          60 s, request 300 s): the connections reach the open-file limit
 *
 * For each: /healthz (a new connection each time, from 127.0.0.1) every 50 ms while the flood
 * opens its connections and 200 times once it has, p50/p99/max and failures; the connections the
 * server holds, and those it closed (evicted) or refused over a cap, from /metrics.
 *
 * The flood runs in two child processes of 10,000 connections each (one process would need
 * 20,000 file descriptors of its own beside this one's). Starts its own redis-server and
 * PostgreSQL cluster and removes them afterwards. BENCH_FLOOD changes the count; BENCH_ONLY runs
 * the scenarios whose name contains it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openFileLimit } from '../src/http/open-file-limit.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { flood, healthz, healthzSeries, loopbackAddresses, summarize, type HealthAnswer } from '../test/support/connection-flood.js';
import { testEnv } from '../test/support/env.js';
import { spawnPlatform, type PlatformProcess } from '../test/support/processes.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import { adminToken, createBenchDatabase, fmt, ROOT } from './http-load.js';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 20_000);
const CHILDREN = 2;

interface Scenario {
  name: string;
  from: string[];
  slowHeaders: boolean;
  env?: Record<string, string>;
}

const SCENARIOS: Scenario[] = [
  { name: 'idle, one address', from: ['127.0.0.1'], slowHeaders: false },
  { name: 'idle, 200 addresses', from: loopbackAddresses(200), slowHeaders: false },
  { name: 'slow headers, 200 addresses', from: loopbackAddresses(200), slowHeaders: true },
  {
    name: "as before: no caps, node's timeouts (slow headers, 200 addresses)",
    from: loopbackAddresses(200),
    slowHeaders: true,
    env: {
      HTTP_MAX_CONNECTIONS: '1000000',
      HTTP_FD_RESERVE: '0',
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
      HTTP_HEADERS_TIMEOUT_MS: '60000',
      HTTP_RECEIVE_TIMEOUT_MS: '300000',
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Flood mode (child process): `flood <port> <count> <slow 0|1> <addresses,...>`; prints a JSON
// line once every connection is opened, another with what is left when told to stop (SIGTERM).

async function floodChild(port: number, count: number, slowHeaders: boolean, from: string[]): Promise<void> {
  const started = performance.now();
  const f = await flood({ port, count, from, slowHeaders });
  console.log(JSON.stringify({ opened: f.opened, failed: f.failed, ms: Math.round(performance.now() - started) }));
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  console.log(JSON.stringify({ open: f.open(), closedByServer: f.closedByServer() }));
  f.close();
  process.exit(0);
}

interface FloodChild {
  opened: Promise<{ opened: number; failed: number; ms: number }>;
  stop(): Promise<{ open: number; closedByServer: number }>;
}

function startFloodChild(port: number, count: number, slowHeaders: boolean, from: string[]): FloodChild {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench/connections.ts'), 'flood', String(port), String(count), slowHeaders ? '1' : '0', from.join(',')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: unknown[] = [];
  const waiters: (() => void)[] = [];
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
    for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line));
      for (const w of waiters.splice(0)) w();
    }
  });
  const line = (n: number) =>
    new Promise<any>((resolve, reject) => {
      const check = () => (lines.length > n ? resolve(lines[n]) : waiters.push(check));
      child.once('exit', (code) => (lines.length > n ? resolve(lines[n]) : reject(new Error(`flood child exited with ${code}`))));
      check();
    });
  return {
    opened: line(0),
    stop: async () => {
      child.kill('SIGTERM');
      return line(1);
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function metricsOf(url: string, token: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(wp_http_connections_\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

async function run(scenario: Scenario, env: NodeJS.ProcessEnv): Promise<void> {
  const platform: PlatformProcess = await spawnPlatform('api', { ...env, ...scenario.env }, { startTimeoutMs: 120_000 });
  try {
    const url = platform.apiUrl!;
    const port = Number(new URL(url).port);
    const token = await adminToken(url);
    const perChild = Math.ceil(FLOOD / CHILDREN);
    const children = Array.from({ length: CHILDREN }, (_, i) => {
      const from = scenario.from.length > 1 ? scenario.from.filter((_, j) => j % CHILDREN === i) : scenario.from;
      return startFloodChild(port, perChild, scenario.slowHeaders, from);
    });
    // /healthz every 50 ms while the flood opens its connections.
    const during: HealthAnswer[] = [];
    let flooding = true;
    const opened = Promise.all(children.map((c) => c.opened)).finally(() => (flooding = false));
    while (flooding) {
      during.push(await healthz(port, '127.0.0.1', 5000));
      await new Promise((r) => setTimeout(r, 50));
    }
    const counts = await opened;
    const after = await healthzSeries(port, 200, { timeoutMs: 5000, giveUpAfter: 10 });
    const metrics = await metricsOf(url, token).catch((): Record<string, number> => ({}));
    const left = await Promise.all(children.map((c) => c.stop()));

    const ok = during.filter((a) => a.status === 200).map((a) => a.ms);
    const failedDuring = during.length - ok.length;
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    console.log(
      `\n${scenario.name}: ${fmt(sum(counts.map((c) => c.opened)))} connections opened, ${fmt(sum(counts.map((c) => c.failed)))} failed, in ${fmt(Math.max(...counts.map((c) => c.ms)))} ms`,
    );
    console.log(
      `  /healthz while flooding: ${during.length} checks, ${failedDuring} failed; ${ok.length ? summarize(ok.sort((a, b) => a - b)) : 'none answered'}`,
    );
    const failures = after.failures.length ? ` (${after.failures.length} failed: ${[...new Set(after.failures)].join('; ')})` : '';
    console.log(`  /healthz after:          ${after.ms.length ? summarize(after.ms) : 'none answered'}${failures}`);
    console.log(`  flood connections still open: ${fmt(sum(left.map((l) => l.open)))}; closed by the server: ${fmt(sum(left.map((l) => l.closedByServer)))}`);
    console.log(
      `  /metrics: ${
        Object.entries(metrics)
          .map(([k, v]) => `${k.replace('wp_http_connections_', '')} ${fmt(v)}`)
          .join(', ') || 'not answered'
      }`,
    );
  } finally {
    await platform.stop();
  }
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-connections-'));
  const redis = await startRedisServer({ dir: path.join(tmp, 'redis') });
  const cluster = await startPostgresCluster();
  try {
    const databaseUrl = await createBenchDatabase(cluster.url, 'bench_connections');
    const env = testEnv(
      { url: redis.url },
      { url: databaseUrl, poolSize: 10 },
      { NODE_ENV: 'production', DATA_DIR: path.join(tmp, 'data'), LOG_LEVEL: 'error', HTTP_ACCESS_LOG: 'false', DATABASE_MIGRATE_ON_START: 'true' },
    );
    const limit = openFileLimit();
    console.log(
      `connection floods of ${fmt(FLOOD)} from loopback; open-file limit ${limit ? `${fmt(limit.soft)} (hard ${fmt(limit.hard)})` : 'unknown'}; ${os.availableParallelism()} CPUs`,
    );
    for (const scenario of SCENARIOS.filter((sc) => sc.name.includes(process.env.BENCH_ONLY ?? ''))) await run(scenario, env);
  } finally {
    await cluster.stop();
    await redis.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'flood') {
  const [port, count, slow, from] = process.argv.slice(3);
  void floodChild(Number(port), Number(count), slow === '1', from!.split(','));
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
