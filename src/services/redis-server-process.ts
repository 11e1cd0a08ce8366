/**
 * A private redis-server child: bound to 127.0.0.1, data (AOF everysec) in its own directory,
 * stopped by its pid. Used for the embedded default and by tests and benchmarks.
 *
 * With a password the server requires AUTH (requirepass). The password reaches it in a config
 * file only its owner can read (`redis.conf`, 0600), never on the command line, where any local
 * user could read it in the process list.
 *
 * Everything in its directory is its owner's only: the directory is 0700 and the server runs
 * with umask 0077 (Redis has no setting for the modes of its files; it creates its AOF directory,
 * AOF files, log and pid file with the modes the umask leaves), so files are 0600.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';
import { exited, spawnOwnerOnly, type ExitInfo } from './child-process.js';

export interface RedisServerOptions {
  dir: string;
  port?: number;
  bin?: string;
  appendOnly?: boolean;
  extraArgs?: string[];
  /** requirepass; the URL carries it. */
  password?: string;
  /** Run in its own process group, so that a signal to the caller's group does not reach it. */
  detached?: boolean;
  /** How long it may take to answer (loading a large AOF included). Default 60 s. */
  startTimeoutMs?: number;
}

export interface RedisServerProcess {
  url: string;
  port: number;
  pid: number;
  /** SHUTDOWN (AOF flushed), then SIGKILL if it lingers. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, no flush: a crash. */
  kill(): Promise<void>;
  /** Sends SIGTERM without waiting (for process exit handlers). */
  signalStop(): void;
  /** Resolves when the server has exited, however that came about. */
  exited: Promise<ExitInfo>;
}

export function redisServerAvailable(bin = 'redis-server'): boolean {
  return spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** RESP encoding of one command. */
function command(...parts: string[]): string {
  return `*${parts.length}\r\n` + parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('');
}

/** Whether a redis-server answers on `port` (authenticating first when given a password). */
export function pingRedis(port: number, password?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let buffer = '';
    const replies = password === undefined ? 1 : 2;
    socket.setTimeout(500);
    socket.on('connect', () => socket.write((password === undefined ? '' : command('AUTH', password)) + command('PING')));
    socket.on('data', (d) => {
      buffer += d.toString();
      const lines = buffer.split('\r\n');
      if (lines.length > replies) {
        socket.destroy();
        resolve(lines[replies - 1] === '+PONG');
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function isRedisServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server');
  } catch {
    return false; // not running
  }
}

/**
 * Stops a redis-server left running on `dir` by a previous owner (its pid file; SIGTERM, which
 * flushes the AOF), waiting until it is gone. Its pid, or undefined when none ran.
 */
export async function stopLeftBehindRedis(dir: string): Promise<number | undefined> {
  const pidFile = path.join(path.resolve(dir), 'redis.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!pid || !isRedisServer(pid)) return undefined;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 200 && isRedisServer(pid); i++) await sleep(50);
  if (isRedisServer(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && isRedisServer(pid); i++) await sleep(50);
  return pid;
}

export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerProcess> {
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  await stopLeftBehindRedis(dir);
  const port = options.port ?? (await freePort());
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--dir',
    dir,
    '--pidfile',
    path.join(dir, 'redis.pid'),
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--appendonly',
    options.appendOnly === false ? 'no' : 'yes',
    '--appendfsync',
    'everysec',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
    '--logfile',
    path.join(dir, 'redis.log'),
    ...(options.extraArgs ?? []),
  ];
  if (options.password !== undefined) {
    const conf = path.join(dir, 'redis.conf');
    writeFileSync(conf, `requirepass ${options.password}\nmasterauth ${options.password}\n`, { mode: 0o600 });
    chmodSync(conf, 0o600); // the mode above applies only to a new file
    args.unshift(conf); // the config file comes first; the options after it
  }
  const child = spawnOwnerOnly(() => spawn(options.bin ?? 'redis-server', args, { stdio: 'ignore', detached: options.detached ?? false }));
  const exit = exited(child);
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  const log = path.join(dir, 'redis.log');
  const started = (async () => {
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`redis-server exited (${child.exitCode ?? child.signalCode}) while starting; see ${log}`);
      if (await pingRedis(port, options.password)) return;
      await sleep(25);
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server did not answer on port ${port}; see ${log}`);
  })();
  await Promise.race([started, spawnError]);
  let stopping: Promise<void> | undefined;
  const signalStop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); // redis flushes the AOF and exits on SIGTERM
  };
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalStop();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    })());
  return {
    url: options.password !== undefined ? `redis://:${encodeURIComponent(options.password)}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop,
    signalStop,
    exited: exit,
    kill: async () => {
      child.kill('SIGKILL');
      await exit;
    },
  };
}
