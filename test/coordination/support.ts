/**
 * Helpers of the multi-process cluster tests: a platform process with the probe work
 * (test/fixtures/coordination/probe-platform.ts), an API client per process, and the probe log check.
 */
import { TEST_ADMIN } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { spawnTsProcess, type PlatformProcess } from '../support/processes.js';

/** Starts the probe platform with `roles` (must include api for `apiUrl`). */
export function spawnProbePlatform(roles: string, env: NodeJS.ProcessEnv, startTimeoutMs = 90_000): Promise<PlatformProcess> {
  return spawnTsProcess('test/fixtures/coordination/probe-platform.ts', [roles], env, {
    name: `probe platform (${roles})`,
    ready: (out) => out.includes('worker-platform started') && (!roles.includes('api') || /API\s+http/.test(out)),
    startTimeoutMs,
  });
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

/** The probe's lines ("<instance> <token> <epoch ms>"). */
export function probeEntries(raw: string[]): ProbeEntry[] {
  return raw.map((line) => {
    const [instance, token, at] = line.split(' ');
    return { instance: instance!, token: Number(token), at: Number(at) };
  });
}

/**
 * Checks the probe log (in arrival order at Redis) and returns its terms. Throws when two
 * instances acted as leader at once: an entry of an older term after one of a newer term, two
 * instances under one token, or terms overlapping in time.
 */
export function probeTerms(raw: string[]): ProbeTerm[] {
  const entries = probeEntries(raw);
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
      if (term && e.at <= term.last)
        throw new Error(`term ${e.token} (${e.instance}) began at ${e.at}, before term ${term.token} (${term.instance}) last acted at ${term.last}`);
      terms.push({ token: e.token, instance: e.instance, first: e.at, last: e.at, entries: 1 });
    }
  }
  return terms;
}
