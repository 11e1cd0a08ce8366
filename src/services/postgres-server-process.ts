/**
 * A private PostgreSQL server: `initdb` on first start, then `postgres` as a child process bound
 * to 127.0.0.1 on one port (no Unix socket), stopped by its pid. Used for the embedded default
 * (password authentication, durable settings, its own process group) and by tests and
 * benchmarks (trust authentication, fsync off).
 *
 * Layout of `dir`: `data/` (the cluster), `server.log`.
 *
 * As root: PostgreSQL refuses to run as root, so initdb and the server run as the `postgres`
 * user (created by Debian's package), spawned with its uid/gid. That user must be able to reach
 * the data directory; when `dir` lies below a directory it cannot traverse (a clone in /root or
 * in a `mktemp -d` folder, both 0700), the cluster is kept under /var/lib/worker-platform/ and
 * `dir` becomes a symlink to it, so the data still lives "in" DATA_DIR for every later start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './free-port.js';
import { toError } from '../errors.js';
import { alive, exited, type ExitInfo } from './child-process.js';

export interface PostgresServerOptions {
  /** Holds the cluster (`data/`) and `server.log`. */
  dir: string;
  port?: number;
  /** Password of the `postgres` superuser: password (SCRAM) authentication. Unset: trust (tests only). */
  password?: string;
  /** A database created on first start (besides `postgres`); the URL points at it. */
  database?: string;
  /** false: fsync, synchronous_commit and full_page_writes off (tests and benchmarks). Default true. */
  durable?: boolean;
  /** Run in its own process group, so that a signal to the caller's group does not reach it. */
  detached?: boolean;
  /** More `-c name=value` settings. */
  settings?: Record<string, string>;
  startTimeoutMs?: number;
  /** Called once when the cluster had to be kept outside `dir` (see the header). */
  onRelocated?: (realDir: string) => void;
  /** Start an existing cluster only, never `initdb` (a restart: a missing cluster is an error, not a fresh start). */
  existingOnly?: boolean;
}

export interface PostgresServerProcess {
  /** URL of the database (`database`, or `postgres`), with the password when there is one. */
  url: string;
  /** URL of the `postgres` database. */
  adminUrl: string;
  port: number;
  pid: number;
  /** The directory the cluster really lives in (differs from `dir` when relocated). */
  dir: string;
  /** Fast shutdown (SIGINT), then SIGQUIT and SIGKILL if it lingers. Idempotent. */
  stop(): Promise<void>;
  /** Sends the shutdown signal without waiting (for process exit handlers). */
  signalStop(): void;
  /** Resolves when the postmaster has exited, however that came about. */
  exited: Promise<ExitInfo>;
}

/** Directory of PostgreSQL's server binaries (initdb, postgres), or undefined when not installed. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin/initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? path.dirname(which.stdout.trim()) : undefined;
}

export const POSTGRES_MISSING =
  'PostgreSQL server binaries (initdb, postgres) not found: install PostgreSQL (Debian/Ubuntu: apt-get install postgresql), or set DATABASE_URL';

interface RunAs {
  uid: number;
  gid: number;
}

/** The unprivileged user the server runs as when we are root; undefined when we are not root. */
function serverUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[0] === 'postgres');
  if (!entry)
    throw new Error(
      'running as root, but there is no "postgres" user to run PostgreSQL as (PostgreSQL refuses root): install the postgresql package, or run as a normal user',
    );
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** Whether `user` can reach (search) every directory down to `dir`. */
function reachable(dir: string, user: RunAs): boolean {
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid }).status === 0;
}

/**
 * The directory the cluster lives in: `dir` itself, or (root, and `dir` out of the server user's
 * reach) a directory under /var/lib/worker-platform that `dir` links to.
 */
function clusterDir(dir: string, user: RunAs | undefined, onRelocated?: (realDir: string) => void): string {
  if (existsSync(dir) && lstatSync(dir).isSymbolicLink()) return realpathSync(dir);
  mkdirSync(path.dirname(dir), { recursive: true });
  if (!user || reachable(path.dirname(dir), user)) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  const id = createHash('sha256')
    .update(realpathSync(path.dirname(dir)))
    .digest('hex')
    .slice(0, 16);
  const real = path.join('/var/lib/worker-platform', `postgres-${id}`);
  mkdirSync(real, { recursive: true });
  chmodSync('/var/lib/worker-platform', 0o755);
  if (existsSync(dir)) {
    // An empty directory from an earlier attempt is replaced by the link; anything else is kept.
    if (readdirSync(dir).length) throw new Error(`${dir} exists and is not reachable by the postgres user; move it away or choose another DATA_DIR`);
    rmSync(dir, { recursive: true });
  }
  symlinkSync(real, dir);
  onRelocated?.(real);
  return real;
}

/** Stops a server left running on `data` by an earlier owner (its postmaster.pid), waiting until it is gone. Its pid, if one ran. */
async function stopOrphan(data: string): Promise<number | undefined> {
  const pidFile = path.join(data, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!pid || !alive(pid)) return undefined;
  let cmd: string;
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  if (!cmd.includes('postgres')) return undefined;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && alive(pid); i++) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  return pid;
}

/**
 * Stops a PostgreSQL server left running on the cluster in `dir` (a directory, or the link to
 * where the cluster is kept) by a previous owner, waiting until it is gone. Its pid, if one ran.
 */
export async function stopLeftBehindPostgres(dir: string): Promise<number | undefined> {
  const resolved = path.resolve(dir);
  if (!existsSync(resolved)) return undefined;
  return stopOrphan(path.join(realpathSync(resolved), 'data'));
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function initdb(bin: string, data: string, user: RunAs | undefined, password: string | undefined): void {
  const args = ['-D', data, '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--no-instructions'];
  let pwFile: string | undefined;
  if (password !== undefined) {
    // The password reaches initdb in a file only its user can read, deleted right after.
    pwFile = path.join(path.dirname(data), '.initdb-password');
    writeFileSync(pwFile, password + '\n', { mode: 0o600 });
    if (user) chownSync(pwFile, user.uid, user.gid);
    args.push('--auth=scram-sha-256', `--pwfile=${pwFile}`);
  } else {
    args.push('--auth=trust', '--no-sync');
  }
  try {
    const r = spawnSync(path.join(bin, 'initdb'), args, { encoding: 'utf8', ...(user ? { uid: user.uid, gid: user.gid } : {}) });
    if (r.status !== 0) throw new Error(`initdb failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error)).trim().slice(-1000)}`);
  } finally {
    if (pwFile) rmSync(pwFile, { force: true });
  }
}

/** Connects to `url` until it answers or the time is up. */
async function waitForServer(url: string, child: ChildProcess, log: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}) while starting; ${log}:\n${tail(log)}`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      last = err;
      await client.end().catch(() => undefined);
      await sleep(50);
    }
  }
  throw new Error(`postgres did not accept connections within ${timeoutMs} ms (${toError(last).message}); ${log}:\n${tail(log)}`);
}

function withDatabase(url: URL, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServerProcess> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(POSTGRES_MISSING);
  const user = serverUser();
  const dir = clusterDir(path.resolve(options.dir), user, options.onRelocated);
  const data = path.join(dir, 'data');
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    if (options.existingOnly) throw new Error(`no PostgreSQL cluster in ${data} (PG_VERSION is missing)`);
    rmSync(data, { recursive: true, force: true }); // a half-made cluster from an interrupted initdb
    initdb(bin, data, user, options.password);
  } else {
    await stopOrphan(data);
  }

  const port = options.port ?? (await freePort());
  const durable = options.durable !== false;
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: '200',
    ...(durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  const args = ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const log = path.join(dir, 'server.log');
  const logFd = openSync(log, 'a', 0o600);
  chmodSync(log, 0o600); // the mode above applies only to a new file
  if (user) chownSync(log, user.uid, user.gid);
  const child = spawn(path.join(bin, 'postgres'), args, {
    stdio: ['ignore', logFd, logFd],
    detached: options.detached ?? false,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  closeSync(logFd);
  const exit = exited(child);
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));

  const auth = options.password !== undefined ? `postgres:${encodeURIComponent(options.password)}` : 'postgres';
  const base = new URL(`postgresql://${auth}@127.0.0.1:${port}/postgres`);
  const adminUrl = base.toString();
  let stopping: Promise<void> | undefined;
  const signalStop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT'); // fast shutdown
  };
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalStop();
      const quit = setTimeout(() => child.kill('SIGQUIT'), 15_000);
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exit;
      clearTimeout(quit);
      clearTimeout(kill);
    })());
  try {
    await Promise.race([waitForServer(adminUrl, child, log, options.startTimeoutMs ?? 60_000), spawnError]);
    if (options.database && options.database !== 'postgres') {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
        if (!found.rowCount) await admin.query(`CREATE DATABASE "${options.database.replace(/"/g, '""')}"`);
      } finally {
        await admin.end();
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: withDatabase(base, options.database ?? 'postgres'),
    adminUrl,
    port,
    pid: child.pid!,
    dir,
    stop,
    signalStop,
    exited: exit,
  };
}
