/**
 * The HTTP side of the benchmarks that compare the platform's routes with bare servers
 * (bench:pools, bench:messages): server processes pinned to their own CPUs (started as the tests
 * start theirs, test/support/processes.ts), a closed-loop load
 * generator (node:http, keep-alive, one connection per client), and the CPU time per request of
 * each server, of the load generator and of Redis (which share CPU 0, so that their sum per request
 * bounds what a fast server can reach), read from /proc.
 *
 * The method: with `taskset` and 2+ cores the servers run on CPUs 1.. and this process (the load)
 * and Redis on CPU 0, so that a server never shares its core with the load (that sharing, not the
 * server, dominated the spread between runs); each server is warmed up for seconds first (the JIT
 * compiles the hot paths; the platform, with far more code, needs longer than a bare server); the
 * runs are interleaved and repeated, and each figure is the median round.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { TEST_ADMIN } from '../test/support/env.js';
import { spawnTsProcess, type PlatformProcess } from '../test/support/processes.js';
import { percentile } from './stats.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** How long each server is loaded (64 clients) before its first measured run. */
export const PREWARM_MS = 5000;
/** The Redis list the bare pop servers (bench/bare-pop-server.mjs) pop, in bench:pools and bench:scale. */
export const BARE_POP_KEY = 'bench:bare:pool';

export interface LoadResult {
  requests: number;
  errors: number;
  /** Items counted by the target's `items` (1 per good answer by default). */
  items: number;
  seconds: number;
  p50: number;
  p99: number;
  /** CPU time of the server process per request (user + system), µs. */
  cpuUs: number;
  /** CPU time of this process (the load generator) per request, µs. */
  loadCpuUs: number;
  /** CPU time of the target's Redis server per request, µs (0 without `redisPid`). */
  redisCpuUs: number;
}

export const rate = (r: LoadResult) => r.requests / r.seconds;

/** One request of a client: its path, method and JSON body. */
export interface Call {
  path: string;
  method: string;
  body?: string;
}

export interface Target {
  name: string;
  /** The server's base URL (`http://127.0.0.1:port`). */
  url: string;
  /** The server process, whose CPU time per request is reported. */
  pid: number;
  /** The Redis server the target uses, whose CPU time per request is reported too. */
  redisPid?: number;
  headers: Record<string, string>;
  /** The request client `client` makes next. */
  call: (client: number) => Call;
  /** The status of a good answer. */
  okStatus: number;
  /** Items in a good answer (default 1); reads the body only when given. */
  items?: (body: Buffer) => number;
}

/** CPU time (user + system) a process has used so far, in µs, from /proc (clock ticks of 10 ms). */
export function processCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** `clients` clients, each sending its next request as soon as the last one was answered, for `ms`. */
export async function load(target: Target, clients: number, ms: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const base = new URL(target.url);
  const latencies: number[] = [];
  let errors = 0;
  let items = 0;
  const once = (client: number) =>
    new Promise<void>((resolve) => {
      const { path: p, method, body } = target.call(client);
      const headers = {
        ...target.headers,
        ...(body
          ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
          : method === 'GET'
            ? {}
            : { 'content-length': '0' }),
      };
      const started = performance.now();
      const req = http.request({ host: base.hostname, port: base.port, path: p, method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => (target.items ? chunks.push(c) : undefined));
        res.on('end', () => {
          latencies.push(performance.now() - started);
          if (res.statusCode !== target.okStatus) errors += 1;
          else items += target.items ? target.items(Buffer.concat(chunks)) : 1;
          resolve();
        });
      });
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });
  const started = performance.now();
  const cpu0 = processCpuUs(target.pid);
  const loadCpu0 = process.cpuUsage();
  const redisCpu0 = target.redisPid ? processCpuUs(target.redisPid) : 0;
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline) await once(client);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perRequest = (us: number) => us / Math.max(1, latencies.length);
  const cpuUs = perRequest(processCpuUs(target.pid) - cpu0);
  const loadCpu = process.cpuUsage(loadCpu0);
  const loadCpuUs = perRequest(loadCpu.user + loadCpu.system);
  const redisCpuUs = target.redisPid ? perRequest(processCpuUs(target.redisPid) - redisCpu0) : 0;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, items, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs, loadCpuUs, redisCpuUs };
}

export interface Pinning {
  servers: string;
  load: string;
}

/**
 * Pins this process (the load generator) to CPU 0 and returns the CPUs for the servers and for
 * Redis, or undefined when there are fewer than 2 CPUs or no taskset. Call it from a bench's
 * main() only: a server child must keep the CPU it was started on.
 */
export function pinLoadToCpu0(): Pinning | undefined {
  const cpus = os.availableParallelism();
  if (cpus < 2) return undefined;
  try {
    execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return { servers: cpus === 2 ? '1' : `1-${cpus - 1}`, load: '0' };
}

/** Gives this process every CPU again (for the parts of a bench measured after the HTTP runs). */
export function unpinLoad(pinning: Pinning | undefined): void {
  if (pinning) execFileSync('taskset', ['-apc', `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
}

/** Pins another process (Redis) to the load's CPU. */
export function pinToLoadCpu(pinning: Pinning | undefined, pid: number): void {
  if (pinning) execFileSync('taskset', ['-apc', pinning.load, String(pid)], { stdio: 'ignore' });
}

/** Starts `node [flags] --import tsx script ...args` on the servers' CPUs; resolves once its output matches `ready`, with the match. */
export async function spawnServer(
  pinning: Pinning | undefined,
  [script, ...args]: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  nodeFlags: string[] = [],
): Promise<{ server: PlatformProcess; match: RegExpExecArray }> {
  const server = await spawnTsProcess(script!, args, env, {
    name: script!,
    ready: (out) => ready.test(out),
    startTimeoutMs: 90_000,
    nodeFlags,
    ...(pinning ? { cpus: pinning.servers } : {}),
  });
  return { server, match: ready.exec(server.output())! };
}

/**
 * Node flags of a server: BENCH_SERVER_FLAGS (space-separated, given to every server alike, e.g.
 * `--max-semi-space-size=32`), and with BENCH_PROFILE_DIR a CPU profile written to its <name>/ there.
 */
export function serverFlags(name: string): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  const given = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
  return [...given, ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, name)}`] : [])];
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const ms = (n: number) => `${n.toFixed(2)} ms`;

/** Creates database `name` in the cluster at `clusterUrl`; answers its URL. */
export async function createBenchDatabase(clusterUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Logs in as the test admin at the platform's API; answers the bearer token. */
export async function adminToken(apiUrl: string): Promise<string> {
  const login = await fetch(`${apiUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(TEST_ADMIN) });
  return ((await login.json()) as { token: string }).token;
}
