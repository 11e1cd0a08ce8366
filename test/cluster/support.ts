/**
 * Helpers of the multi-process cluster tests: a platform process with the probe work
 * (test/fixtures/cluster/probe-platform.ts), an API client per process, and the probe log check.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import type { PlatformProcess } from '../support/processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts the probe platform with `roles` (must include api for `apiUrl`). */
export async function spawnProbePlatform(roles: string, env: NodeJS.ProcessEnv, startTimeoutMs = 90_000): Promise<PlatformProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/fixtures/cluster/probe-platform.ts'), roles], {
    cwd: ROOT,
    env: { ...env, LOG_PRETTY: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = () => out.includes('worker-platform started') && (!roles.includes('api') || /API\s+http/.test(out));
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), startTimeoutMs);
    const check = () => {
      if (!ready()) return;
      clearTimeout(timer);
      resolve(true);
    };
    child.stdout!.on('data', check);
    exited.then(() => {
      clearTimeout(timer);
      resolve(ready());
    });
  });
  if (!started) {
    child.kill('SIGKILL');
    throw new Error(`probe platform (${roles}) did not start:\n${out}`);
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
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
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

export async function loggedIn(p: PlatformProcess): Promise<ApiClient> {
  const c = new ApiClient(p.apiUrl!);
  await c.login(TEST_ADMIN.username, TEST_ADMIN.password);
  return c;
}

/** GET with a deadline: a paused or killed process answers undefined. */
export async function getWithin<T = any>(c: ApiClient, path: string, timeoutMs: number): Promise<T | undefined> {
  try {
    const res = await fetch(c.baseUrl + path, { headers: { authorization: `Bearer ${c.token}` }, signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) return undefined;
    return (await res.json()) as T;
  } catch {
    return undefined;
  }
}

export interface ProbeEntry {
  instance: string;
  token: number;
  at: number;
}

export interface ProbeTerm {
  token: number;
  instance: string;
  first: number;
  last: number;
  entries: number;
}

/**
 * Checks the probe log (in arrival order at Redis) and returns its terms. Throws when two
 * instances acted as leader at once: an entry of an older term after one of a newer term, two
 * instances under one token, or terms overlapping in time.
 */
export function probeTerms(raw: string[]): ProbeTerm[] {
  const entries: ProbeEntry[] = raw.map((line) => {
    const [instance, token, at] = line.split(' ');
    return { instance: instance!, token: Number(token), at: Number(at) };
  });
  const terms: ProbeTerm[] = [];
  for (const [i, e] of entries.entries()) {
    const prev = entries[i - 1];
    if (prev && e.token < prev.token) throw new Error(`stale leader acted: ${JSON.stringify(e)} after ${JSON.stringify(prev)}`);
    const term = terms.at(-1);
    if (term && term.token === e.token) {
      if (term.instance !== e.instance) throw new Error(`two instances under token ${e.token}: ${term.instance}, ${e.instance}`);
      term.last = e.at;
      term.entries += 1;
    } else {
      if (term && e.at <= term.last) throw new Error(`term ${e.token} (${e.instance}) began at ${e.at}, before term ${term.token} (${term.instance}) last acted at ${term.last}`);
      terms.push({ token: e.token, instance: e.instance, first: e.at, last: e.at, entries: 1 });
    }
  }
  return terms;
}
