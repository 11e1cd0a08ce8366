/**
 * A private redis-server child: bound to 127.0.0.1, data (AOF everysec) in its own directory,
 * stopped by its pid. Used for the embedded default and by tests and benchmarks.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

export interface RedisServerOptions {
  dir: string;
  port?: number;
  bin?: string;
  appendOnly?: boolean;
  extraArgs?: string[];
}

export interface RedisServerProcess {
  url: string;
  port: number;
  pid: number;
  /** SHUTDOWN (AOF flushed), then SIGKILL if it lingers. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, no flush: a crash. */
  kill(): Promise<void>;
}

export function redisServerAvailable(bin = 'redis-server'): boolean {
  return spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let buffer = '';
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      buffer += d.toString();
      if (buffer.includes('\r\n')) {
        socket.destroy();
        resolve(buffer.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Stops a redis-server left running by a previous owner of `dir` (its pid file). */
function stopOrphan(dir: string): void {
  const pidFile = path.join(dir, 'redis.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!pid) return;
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (cmd.includes('redis-server')) process.kill(pid, 'SIGTERM');
  } catch {
    /* not running */
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerProcess> {
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  stopOrphan(dir);
  const port = options.port ?? (await freePort());
  const args = [
    '--bind', '127.0.0.1',
    '--port', String(port),
    '--dir', dir,
    '--pidfile', path.join(dir, 'redis.pid'),
    '--daemonize', 'no',
    '--protected-mode', 'yes',
    '--appendonly', options.appendOnly === false ? 'no' : 'yes',
    '--appendfsync', 'everysec',
    '--save', '',
    '--maxmemory-policy', 'noeviction',
    '--logfile', path.join(dir, 'redis.log'),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(options.bin ?? 'redis-server', args, { stdio: 'ignore' });
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  const started = (async () => {
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}; see ${path.join(dir, 'redis.log')}`);
      if (await ping(port)) return;
      await sleep(25);
    }
    throw new Error(`redis-server did not answer on port ${port}; see ${path.join(dir, 'redis.log')}`);
  })();
  await Promise.race([started, spawnError]);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM'); // redis flushes the AOF and exits on SIGTERM
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    })());
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop,
    kill: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
