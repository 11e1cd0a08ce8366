/**
 * The platform as a user runs it: `node src/setup/bootstrap.mjs start` (what `npm start` runs),
 * or `npm run start:role -- <roles>` for a process that attaches to it, each in its own process
 * group as a terminal would run it, with nothing but the settings a user would give (DATA_DIR,
 * PORT, ...). No test wiring: the process is driven over HTTP and watched through its log.
 *
 * The log is JSON lines (LOG_PRETTY=false). `unexpected()` lists the lines at error level or
 * above, and the job failures (every attempt that failed), that no `expect*` call declared:
 * an e2e file checks it is empty at its end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, rmSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../support/http-client.js';
import { waitFor } from '../../support/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The default login printed by `npm start`. */
export const DEFAULT_ADMIN = { username: 'admin', password: 'change-me' };

export interface LogLine {
  level: number;
  msg: string;
  time: number;
  [field: string]: unknown;
}

/** Log messages of a failed job attempt (src/queues/create-worker.ts). */
const JOB_FAILED = new Set(['job failed; will retry', 'job failed; attempts exhausted', 'job failed permanently; no retry']);

export interface ProductProcess {
  child: ChildProcess;
  /** Process id = process group id (the process leads its group). */
  pid: number;
  /** API base URL, when the process runs the api role. */
  url?: string;
  /** Base URL of the process's HTTP server (the API's, or health, readiness and metrics only), as it printed it. */
  httpUrl: string;
  output(): string;
  lines(): LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` to the whole process group, as a terminal's Ctrl-C or systemd's stop does. */
  signalGroup(signal: NodeJS.Signals): void;
  /**
   * Signals the group and waits for the process to exit; the time it took in ms, and whether the
   * platform stopped cleanly: it logged `stopped` and exited with 0 (npm, which runs start:role,
   * ends by the signal it passed on, once its child has exited).
   */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; clean: boolean; ms: number }>;
  /** SIGKILL to the group (a crash), then waits. */
  kill(): Promise<void>;
}

export interface StartOptions {
  dataDir: string;
  port?: number;
  /** More settings, as a user would put them in .env or the environment. */
  env?: Record<string, string>;
  /**
   * `['start']` (default: every role, as `npm start`), `['start:role', 'crawler']`, or `['built']`:
   * `node dist/workers/all.js`, the production build (`npm run build`) as the Docker image runs it.
   */
  command?: ['start'] | ['start:role', string] | ['built'];
  startTimeoutMs?: number;
}

function baseEnv(options: StartOptions): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: options.dataDir,
    LOG_PRETTY: 'false',
    LOG_LEVEL: 'info',
    // Every process listens (worker-only ones serve health, readiness and metrics): without a
    // port it gets any free one, never the default 3000 another program on the machine may want.
    PORT: String(options.port ?? 0),
    ...options.env,
  };
}

/** Starts a platform process and resolves once it printed `worker-platform started`. */
export async function startProduct(options: StartOptions): Promise<ProductProcess> {
  const command = options.command ?? ['start'];
  const [cmd, args] =
    command[0] === 'start'
      ? [process.execPath, [path.join(ROOT, 'src/setup/bootstrap.mjs'), 'start']]
      : command[0] === 'built'
        ? [process.execPath, [path.join(ROOT, 'dist/workers/all.js')]]
        : ['npm', ['run', '--silent', 'start:role', '--', command[1]]];
  const child = spawn(cmd, args, { cwd: ROOT, env: baseEnv(options), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // 'close', not 'exit': it comes once the output pipes are closed too, i.e. once every process
  // that writes to them (npm's child, tsx's child) has exited as well.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  exited.then(() => (done = true));
  const started = await Promise.race([
    waitFor(() => out.includes('worker-platform started'), { timeoutMs: options.startTimeoutMs ?? 120_000, intervalMs: 50, message: 'never started' }).then(
      () => true,
      () => false,
    ),
    exited.then(() => false),
  ]);
  const pid = child.pid!;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      /* gone */
    }
  };
  if (!started) {
    signalGroup('SIGKILL');
    throw new Error(`the platform (${command.join(' ')}) did not start:\n${out.slice(-4000)}`);
  }
  const url = /API\s+(http:\/\/\S+)\/api/.exec(out)?.[1];
  const httpUrl = /Health\s+(http:\/\/\S+)\/healthz/.exec(out)?.[1] ?? '';
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as LogLine];
        } catch {
          return [];
        }
      });
  return {
    child,
    pid,
    ...(url ? { url } : {}),
    httpUrl,
    output: () => out,
    lines,
    exited,
    signalGroup,
    async stop(signal = 'SIGTERM', timeoutMs = 90_000) {
      const t0 = Date.now();
      if (!done) {
        signalGroup(signal);
        const timer = setTimeout(() => signalGroup('SIGKILL'), timeoutMs);
        await exited;
        clearTimeout(timer);
      }
      const { code, signal: by } = await exited;
      const stoppedLogged = lines().some((l) => l.msg === 'stopped');
      const clean = stoppedLogged && (code === 0 || (command[0] === 'start:role' && by === signal));
      return { code, clean, ms: Date.now() - t0 };
    },
    async kill() {
      if (done) return;
      signalGroup('SIGKILL');
      await exited;
    },
  };
}

/** An API client logged in as the default admin. */
export async function adminClient(url: string): Promise<ApiClient> {
  const api = new ApiClient(url);
  await api.login(DEFAULT_ADMIN.username, DEFAULT_ADMIN.password);
  return api;
}

/**
 * What a test declares it causes on purpose: error lines (by message pattern) and failed job
 * attempts (by a predicate on the log line, which carries queue and jobId).
 */
export class Expectations {
  private readonly errors: RegExp[] = [];
  private readonly failures: ((line: LogLine) => boolean)[] = [];

  expectError(pattern: RegExp): void {
    this.errors.push(pattern);
  }

  expectJobFailure(matches: (line: LogLine) => boolean): void {
    this.failures.push(matches);
  }

  /** Lines at error level or above, and job failures, that were not declared. */
  unexpected(lines: LogLine[]): LogLine[] {
    return lines.filter((l) => {
      if (l.level >= 50) return !this.errors.some((p) => p.test(`${l.msg} ${typeof l.err === 'string' ? l.err : JSON.stringify(l.err ?? '')}`));
      if (JOB_FAILED.has(l.msg)) return !this.failures.some((f) => f(l));
      return false;
    });
  }
}

/**
 * Removes a data directory after the processes using it are gone: the embedded services are
 * stopped by their pids first (should a process have died without stopping them), and a
 * PostgreSQL cluster kept outside DATA_DIR (see postgres-server-process.ts) goes with it.
 */
export async function removeDataDir(dataDir: string): Promise<void> {
  for (const pidFile of [path.join(dataDir, 'redis/redis.pid'), path.join(dataDir, 'postgres/data/postmaster.pid')]) {
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      /* not running */
    }
  }
  const pg = path.join(dataDir, 'postgres');
  if (existsSync(pg) && lstatSync(pg).isSymbolicLink()) rmSync(realpathSync(pg), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
