// `npm start` and `npm test` on a fresh clone: install what is missing, then run.
//
//   node src/setup/bootstrap.mjs start   → every role in one process (workers/all.ts)
//   node src/setup/bootstrap.mjs test    → the whole test suite (vitest)
//   node src/setup/bootstrap.mjs setup   → only the set-up (CI runs it before lint/typecheck)
//
// Plain JavaScript with no dependencies: it runs before node_modules exists.
// Set-up: system packages (redis-server, postgresql, chromium; for tests also prometheus, for
// promtool) via apt-get on Debian/Ubuntu as root, else a one-line instruction; npm ci when node_modules is missing or
// older than the lockfile; prisma generate (offline) when the schema changed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prismaGenerate } from './prisma-generate.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mode = process.argv[2] ?? 'start';
const passthrough = process.argv.slice(3);

function log(msg) {
  console.error(`[setup] ${msg}`);
}

function loadDotEnv() {
  const file = path.join(root, '.env');
  if (existsSync(file)) process.loadEnvFile(file);
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function isDebianRoot() {
  return process.getuid?.() === 0 && existsSync('/etc/debian_version') && has('apt-get');
}

function postgresInstalled() {
  if (has('initdb')) return true;
  const base = '/usr/lib/postgresql';
  return existsSync(base) && spawnSync('sh', ['-c', `ls ${base}/*/bin/initdb`], { stdio: 'ignore' }).status === 0;
}

function ensureSystemPackages(needs) {
  const missing = needs.filter((n) => !n.present());
  if (!missing.length) return;
  const names = missing.map((n) => n.pkg);
  if (process.env.INSTALL_MISSING === 'false' || !isDebianRoot()) {
    log(
      `missing: ${names.join(', ')}. Install them (Debian/Ubuntu: sudo apt-get install -y ${names.join(' ')}; elsewhere the packages that provide ${names.map((n) => ({ 'redis-server': 'redis-server', postgresql: 'initdb and postgres', chromium: 'a Chromium browser' })[n] ?? n).join(', ')}), or run \`docker compose up -d redis postgres\` and set REDIS_URL/DATABASE_URL.`,
    );
    process.exit(1);
  }
  log(`installing ${names.join(', ')} with apt-get (once)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (r.status === 0) r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], { stdio: 'inherit', env });
  if (r.status !== 0) {
    log(`apt-get install ${names.join(' ')} failed; install them yourself and run again.`);
    process.exit(1);
  }
  // Debian's package starts a system redis-server on 6379; the platform runs its own.
  if (names.includes('redis-server')) spawnSync('sh', ['-c', 'service redis-server stop >/dev/null 2>&1 || true']);
  if (names.includes('postgresql')) spawnSync('sh', ['-c', 'service postgresql stop >/dev/null 2>&1 || true']);
  if (names.includes('prometheus')) spawnSync('sh', ['-c', 'service prometheus stop >/dev/null 2>&1 || true']);
}

function ensureNodeModules() {
  const marker = path.join(root, 'node_modules/.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
  if (!stale) return;
  log('installing dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: 'true', REDISMS_SYSTEM_BINARY: '/usr/bin/redis-server' },
  });
  if (r.status !== 0) {
    log('npm ci failed');
    process.exit(r.status ?? 1);
  }
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    log(`Node ${process.versions.node} is too old: install Node 20.19 or newer.`);
    process.exit(1);
  }
}

function setup(forTests) {
  checkNode();
  loadDotEnv();
  const chromium = process.env.PUPPETEER_EXECUTABLE_PATH || '/usr/bin/chromium';
  const needs = [{ pkg: 'chromium', present: () => existsSync(chromium) || has('chromium') }];
  if (forTests || (!process.env.REDIS_URL && !process.env.REDIS_CLUSTER_NODES))
    needs.push({ pkg: 'redis-server', present: () => has(process.env.REDIS_SERVER_BIN || 'redis-server') });
  if (forTests || !process.env.DATABASE_URL) needs.push({ pkg: 'postgresql', present: postgresInstalled });
  // promtool checks and unit-tests the Prometheus alert rules (dashboards/prometheus).
  if (forTests) needs.push({ pkg: 'prometheus', present: () => has('promtool') });
  ensureSystemPackages(needs);
  ensureNodeModules();
  prismaGenerate();
}

// A signal to this launcher alone is passed on; one to the whole process group (a terminal's
// Ctrl-C) reaches the child too, which takes the copies that come within a second for one request.
function run(cmd, args, env = process.env) {
  const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env });
  const forward = (sig) => child.kill(sig);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  process.on('SIGHUP', forward);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

switch (mode) {
  case 'setup':
    setup(true);
    break;
  case 'start':
    setup(false);
    run(process.execPath, ['--import', 'tsx', path.join(root, 'workers/all.ts'), ...passthrough]);
    break;
  case 'test':
    setup(true);
    run(process.execPath, [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...passthrough]);
    break;
  default:
    log(`unknown mode "${mode}" (start, test, setup)`);
    process.exit(2);
}
