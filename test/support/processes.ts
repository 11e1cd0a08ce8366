/**
 * Platform processes for multi-process tests: `node --import tsx workers/run-role.ts <roles>`,
 * each its own process with the given environment; stopped or killed by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killProcessTree } from './process-tree.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface PlatformProcess {
  child: ChildProcess;
  pid: number;
  /** Everything the process printed. */
  output(): string;
  /** API URL printed at start, when the api role runs. */
  apiUrl?: string;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM and wait for exit (after `timeoutMs`, SIGKILL to it and every process it started). */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL and wait (what it started runs on, as after a crash). */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Runs `script` (TypeScript, through tsx) as a child process and resolves once `ready(output)`
 * holds; rejects with the output when it exits first or takes longer than `startTimeoutMs` (then
 * it is killed with every process it started: no redis-server, PostgreSQL or server of a failed
 * start runs on beside the tests that follow).
 */
export async function spawnTsProcess(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: {
    name: string;
    ready: (output: string) => boolean;
    startTimeoutMs?: number;
    /** Node flags before the script (--cpu-prof, ...). A `.js` or `.mjs` script (a built one) runs on plain node, without tsx. */
    nodeFlags?: string[];
    /** Run on these CPUs only (`taskset -c`, which execs node: the pid stays node's). */
    cpus?: string;
    /** The open-file limit, soft and hard (`prlimit --nofile`, which execs node too). */
    openFiles?: number;
  },
): Promise<PlatformProcess> {
  const command = [process.execPath, ...(options.nodeFlags ?? []), ...(/\.m?js$/.test(script) ? [] : ['--import', 'tsx']), path.join(ROOT, script), ...args];
  if (options.cpus) command.unshift('taskset', '-c', options.cpus);
  if (options.openFiles) command.unshift('prlimit', `--nofile=${options.openFiles}:${options.openFiles}`, '--');
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env, LOG_PRETTY: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), options.startTimeoutMs ?? 60_000);
    const check = () => {
      if (!options.ready(out)) return;
      clearTimeout(timer);
      resolve(true);
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    exited.then(() => {
      clearTimeout(timer);
      resolve(options.ready(out));
    });
  });
  if (!started) {
    killProcessTree(child.pid!);
    await exited;
    throw new Error(`${options.name} did not start:\n${out}`);
  }
  const apiUrl = /API\s+(http:\/\/\S+)\/api/.exec(out)?.[1];
  return {
    child,
    pid: child.pid!,
    output: () => out,
    ...(apiUrl ? { apiUrl } : {}),
    signal: (sig) => child.kill(sig),
    exited,
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGCONT'); // in case a test left it paused
      child.kill('SIGTERM');
      const timer = setTimeout(() => killProcessTree(child.pid!), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export function spawnPlatform(roles: string, env: NodeJS.ProcessEnv, options: { startTimeoutMs?: number; openFiles?: number } = {}): Promise<PlatformProcess> {
  return spawnTsProcess('workers/run-role.ts', [roles], env, {
    name: `platform process (${roles})`,
    ready: (out) => out.includes('worker-platform started'),
    ...options,
  });
}
