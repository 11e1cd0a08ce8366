/**
 * Start-up time of `npm start` (`npm run bench:start`): from launching `node src/setup/bootstrap.mjs
 * start` to the first 200 of /healthz, on an empty DATA_DIR (cold: initdb, migrations, first
 * Chromium profile) and again on the same DATA_DIR (warm), with the packages already installed.
 * Baseline in the same run: the embedded services alone (redis-server and PostgreSQL with initdb,
 * then again without), started the way the platform starts them.
 * BENCH_START_ROUNDS (default 3) rounds; the median is shown.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgresServer } from '../src/services/postgres-server-process.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { freePort } from '../src/services/free-port.js';
import { ROOT } from './http-load.js';
import { median } from './stats.js';

const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 3);

/** ms from spawn to the first healthy /healthz; then stops the platform (SIGTERM to its group). */
async function startOnce(dataDir: string, port: number): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'src/setup/bootstrap.mjs'), 'start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ms: number;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      ms = performance.now() - t0;
      break;
    }
    if (child.exitCode !== null) throw new Error('the platform exited while starting');
    await sleep(20);
  }
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  return ms;
}

/** ms to start both embedded services as the platform does (no platform). */
async function servicesOnce(dir: string): Promise<number> {
  const t0 = performance.now();
  const [redis, pg] = await Promise.all([
    startRedisServer({ dir: path.join(dir, 'redis'), password: 'x'.repeat(48) }),
    startPostgresServer({ dir: path.join(dir, 'postgres'), password: 'x'.repeat(48), database: 'platform' }),
  ]);
  const ms = performance.now() - t0;
  await Promise.all([redis.stop(), pg.stop()]);
  return ms;
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rows: { cold: number[]; warm: number[]; svcCold: number[]; svcWarm: number[] } = { cold: [], warm: [], svcCold: [], svcWarm: [] };
console.log(`start-up benchmark — ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}\n`);
for (let round = 0; round < ROUNDS; round++) {
  // /tmp-style folders that the postgres user can reach (as root), as a clone in a home folder would be
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-start-'));
  const svc = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-services-'));
  for (const d of [dir, svc]) chmodSync(d, 0o755);
  try {
    const port = await freePort();
    rows.cold.push(await startOnce(path.join(dir, 'data'), port));
    rows.warm.push(await startOnce(path.join(dir, 'data'), port));
    rows.svcCold.push(await servicesOnce(svc));
    rows.svcWarm.push(await servicesOnce(svc));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(svc, { recursive: true, force: true });
  }
}
const line = (label: string, platform: number[], services: number[]) =>
  console.log(
    `  ${label}  npm start → /healthz ${fmt(median(platform))}   embedded services alone ${fmt(median(services))}   platform share ${fmt(median(platform) - median(services))} (${(median(platform) / median(services)).toFixed(2)}x)`,
  );
line('cold (empty DATA_DIR)', rows.cold, rows.svcCold);
line('warm (same DATA_DIR) ', rows.warm, rows.svcWarm);
console.log(`\n  rounds: ${ROUNDS}; each figure the median; all: cold ${rows.cold.map(fmt).join(', ')}; warm ${rows.warm.map(fmt).join(', ')}`);
process.exit(0);
