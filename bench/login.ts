/**
 * What a login flood costs the rest of the API (`npm run bench:login`). The platform is started
 * as `npm start` starts it (every role, embedded Redis and PostgreSQL, behind a trusted proxy
 * address so that X-Forwarded-For can stand for many clients), and two closed-loop probes,
 * GET /healthz and an authenticated GET /api/feeds, measure latency in three phases of
 * BENCH_LOGIN_PHASE_MS (default 10 s) each, in one run of the same process:
 *
 *   baseline      the probes alone;
 *   one address   waves of 400 concurrent logins, each with another unknown user name, from one
 *                 client address (the finding: they cost 400 bcrypt checks on the event loop);
 *   many addresses the same waves, each login from a fresh address, so every attempt passes the
 *                 per-address limits and the password threads are full all the time (what does
 *                 not fit their wait line is answered 429 `login_busy`).
 *
 * Printed per phase: p50/p99/max of each probe, login answers by status, the password checks
 * made (wp_auth_password_checks_total), the CPU time of the platform's event loop thread (per
 * request answered) and of its password threads (found by their niceness, PASSWORD_THREAD_NICE),
 * and the lease-lost / heartbeat-failed lines logged.
 */
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PASSWORD_THREAD_NICE } from '../src/auth/password-hasher.js';
import { freePort } from '../src/services/free-port.js';
import { adminClient, removeDataDir, startProduct } from '../test/e2e/support/product.js';
import { percentile } from './stats.js';

const PHASE_MS = Number(process.env.BENCH_LOGIN_PHASE_MS ?? 10_000);
const FLOOD = 400;

interface Answer {
  status: number;
  ms: number;
}

/** One request on `agent`; its status and latency (status 0: no answer). */
function request(agent: http.Agent, url: URL, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request(url, { agent, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - t0 }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.end(options.body);
  });
}

/** The platform process `npm start` runs (workers/all.ts, the launcher's child). */
function platformPid(launcher: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === launcher && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('workers/all.ts')) return Number(entry);
    } catch {
      /* gone */
    }
  }
  throw new Error(`no platform process under ${launcher}`);
}

/** CPU time (user + system, ms) of a process's event loop thread and of its password threads, from /proc. */
function threadCpuMs(pid: number): { loop: number; password: number } {
  const out = { loop: 0, password: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const ms = (Number(f[11]) + Number(f[12])) * 10;
      if (Number(tid) === pid) out.loop += ms;
      else if (Number(f[16]) === PASSWORD_THREAD_NICE) out.password += ms;
    } catch {
      /* gone */
    }
  }
  return out;
}

function summary(xs: number[]): string {
  const sorted = Float64Array.from(xs).sort();
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(1).padStart(8) : '       -');
  return `n=${String(xs.length).padStart(5)}  p50 ${f(percentile(sorted, 50))} ms  p99 ${f(percentile(sorted, 99))} ms  max ${f(sorted.at(-1) ?? NaN)} ms`;
}

const counts = (answers: Answer[]) =>
  Object.entries(answers.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-login-'));
  const product = await startProduct({
    dataDir,
    port: await freePort(),
    env: { HTTP_ACCESS_LOG: 'false', HTTP_TRUST_PROXY: 'true', HTTP_TRUSTED_PROXIES: '127.0.0.1' },
  });
  try {
    const api = await adminClient(product.url!);
    const base = new URL(product.url!);
    const auth = { authorization: `Bearer ${api.token}` };
    // The probes are another client: they connect from 127.0.0.2 (loopback still), so the flood's
    // connections from 127.0.0.1 count against its own per-address cap (HTTP_MAX_CONNECTIONS_PER_ADDRESS), not theirs.
    const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 2, localAddress: '127.0.0.2' });
    const floodAgent = new http.Agent({ keepAlive: true, maxSockets: FLOOD });
    const checks = async () => {
      const text = (await api.get('/metrics')).body as string;
      return text
        .split('\n')
        .filter((l) => l.startsWith('wp_auth_password_checks_total{'))
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    };
    const pid = platformPid(product.pid);
    const badLines = () => product.lines().filter((l) => /lease lost|heartbeat failed/.test(l.msg)).length;
    let unique = 0;
    const login = (address: string) =>
      request(floodAgent, new URL('/api/auth/login', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ username: `nobody-${++unique}`, password: 'a wrong password' }),
      });

    /** Runs the probes for PHASE_MS beside `flood` (which runs until told to stop); prints the phase. */
    async function phase(name: string, flood?: (running: () => boolean) => Promise<Answer[]>): Promise<void> {
      const checksBefore = await checks();
      const linesBefore = badLines();
      const cpuBefore = threadCpuMs(pid);
      const until = performance.now() + PHASE_MS;
      const running = () => performance.now() < until;
      const probe = async (p: string, headers: Record<string, string> = {}) => {
        const ms: number[] = [];
        const answers: Answer[] = [];
        while (running()) {
          const a = await request(probeAgent, new URL(p, base), { headers });
          ms.push(a.ms);
          answers.push(a);
        }
        return { ms, statuses: counts(answers) };
      };
      const [health, feeds, logins] = await Promise.all([probe('/healthz'), probe('/api/feeds', auth), flood ? flood(running) : Promise.resolve([])]);
      const cpu = threadCpuMs(pid);
      const requests = health.ms.length + feeds.ms.length + logins.length;
      const loopMs = cpu.loop - cpuBefore.loop;
      console.log(`\n${name}`);
      console.log(`  GET /healthz    ${summary(health.ms)}  statuses ${health.statuses}`);
      console.log(`  GET /api/feeds  ${summary(feeds.ms)}  statuses ${feeds.statuses}`);
      if (flood) {
        console.log(`  logins          ${logins.length} answered (${counts(logins)}); login latency ${summary(logins.map((a) => a.ms))}`);
        console.log(`  password checks ${(await checks()) - checksBefore}`);
      }
      console.log(
        `  CPU            event loop ${loopMs} ms (${((loopMs * 1000) / requests).toFixed(0)} µs per request answered), password threads ${cpu.password - cpuBefore.password} ms`,
      );
      console.log(`  lease lost / heartbeat failed lines: ${badLines() - linesBefore}`);
    }

    // Warm-up: JIT, connections, the password threads.
    await Promise.all(Array.from({ length: 200 }, () => request(probeAgent, new URL('/api/feeds', base), { headers: auth })));
    await login('192.0.2.250');

    console.log(`bench:login  phase ${PHASE_MS} ms, ${os.availableParallelism()} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}`);
    await phase('baseline (no logins)');
    await phase(`one address: waves of ${FLOOD} concurrent logins, distinct unknown names`, async (running) => {
      const all: Answer[] = [];
      while (running()) all.push(...(await Promise.all(Array.from({ length: FLOOD }, () => login('203.0.113.1')))));
      return all;
    });
    let next = 0;
    const fresh = () => `10.${(++next >> 16) & 255}.${(next >> 8) & 255}.${next & 255}`;
    await phase(`many addresses: waves of ${FLOOD} concurrent logins, each from a fresh address`, async (running) => {
      const all: Answer[] = [];
      while (running()) all.push(...(await Promise.all(Array.from({ length: FLOOD }, () => login(fresh())))));
      return all;
    });
    await phase('baseline again');
    probeAgent.destroy();
    floodAgent.destroy();
  } finally {
    await product.stop();
    await removeDataDir(dataDir);
  }
}

await main();
