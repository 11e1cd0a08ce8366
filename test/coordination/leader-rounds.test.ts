/**
 * Every leader-only loop stops within one round when its term ends (lease-manager.ts's contract).
 * Two platform processes with the cluster, feeds and pipeline roles (PostgreSQL, one Redis,
 * LEADER_TTL_MS 3 s, debug logs): the first leads every singleton work (the `cluster` lease runs
 * the maintenance queue: reconciliations every second, shared config, registry trim; the
 * `crawl-scheduler` lease runs backpressure every 200 ms, with 30 due crawls and nobody crawling,
 * so every round has work). It is paused (SIGSTOP) past its lease; the other takes every work
 * over; then the paused one resumes (SIGCONT). From then on it must not start a single round of
 * any of them: each round line it logs (with its duration) must have started before the pause.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const ROLES = 'cluster,feeds,pipeline';
/** The log line each round of a leader-only loop writes (pino msg), with the round's duration in `ms` where it has one. */
const ROUND_LINES = [
  'backpressure round',
  'backpressure: due crawls held back',
  'crawl schedule reconciled',
  'feed refresh chains checked',
  'feed refresh chains repaired',
  'maintenance task ran',
  'shared config published',
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Whether the log shows rounds of every loop (backpressure, crawl reconciliation, feed reconciliation). */
const ranEveryLoop = (text: string) => {
  const seen = new Set(logLines(text).map((l) => l.msg));
  return (
    (seen.has('backpressure round') || seen.has('backpressure: due crawls held back')) &&
    seen.has('crawl schedule reconciled') &&
    seen.has('feed refresh chains checked')
  );
};

interface LogLine {
  time: number;
  msg: string;
  ms?: number;
  work?: string;
}

const logLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

describe('leader-only loops after a pause past the lease', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let probe: Redis;
  const procs: PlatformProcess[] = [];

  const env = (id: string) =>
    testEnv(redis, db, {
      INSTANCE_ID: id,
      LOG_LEVEL: 'debug',
      LEADER_TTL_MS: '3000',
      INSTANCE_TTL_MS: '3000',
      CONFIG_REFRESH_INTERVAL_MS: '500',
      SCHEDULER_RECONCILE_INTERVAL: '1',
      FEED_RECONCILE_INTERVAL_SECONDS: '1',
      SCHEDULER_TICK_MS: '200',
      SCHEDULER_BACKPRESSURE_THRESHOLD: '1',
      SCHEDULER_BATCH_SIZE: '1',
      SCHEDULER_SPREAD_SECONDS: '0',
      DATABASE_POOL_SIZE: '3',
    });

  /** Instance holding each lease, from Redis (`<instance>#<token>`). */
  const holders = async (): Promise<Map<string, string>> => {
    const keys = (await probe.keys('wp:cluster:lease:*')).filter((k) => !k.endsWith(':token'));
    const values = keys.length ? await probe.mget(...keys) : [];
    return new Map(keys.map((k, i) => [k, values[i]?.split('#')[0] ?? '']));
  };
  const holdsAll = async (id: string) => {
    const h = await holders();
    return h.size >= 2 && [...h.values()].every((v) => v === id);
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    probe = new Redis(redis.url);
    db = await createTestDatabase();
    await db.query(`INSERT INTO ips (name, keyword, updated_at) SELECT 'IP ' || i, 'kw' || i, now() FROM generate_series(1, 30) AS i`);
    procs.push(await spawnPlatform(ROLES, env('rounds-a'), { startTimeoutMs: 90_000 }));
    await waitFor(() => holdsAll('rounds-a'), { timeoutMs: 20_000, message: 'the first process does not lead every work' });
    procs.push(await spawnPlatform(ROLES, env('rounds-b'), { startTimeoutMs: 90_000 }));
  }, 240_000);
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    probe?.disconnect();
    await redis?.destroy();
    await db?.drop();
  });

  it('runs no further round in the paused leader once it resumes', { timeout: 90_000 }, async () => {
    const [a, b] = procs as [PlatformProcess, PlatformProcess];
    // The leader is busy: every loop has run rounds.
    await waitFor(() => ranEveryLoop(a.output()), { timeoutMs: 20_000, message: 'the leader ran no rounds' });
    expect(await holdsAll('rounds-a')).toBe(true);

    a.signal('SIGSTOP');
    const pausedAt = Date.now();
    let resumedFrom: number;
    let resumedAt: number;
    try {
      await waitFor(() => holdsAll('rounds-b'), { timeoutMs: 15_000, intervalMs: 100, message: 'the other process did not take every work over' });
      const tookOver = Date.now();
      console.log(`SIGSTOP: every work taken over after ${tookOver - pausedAt} ms`);
      // The successor runs the rounds now.
      const bFrom = b.output().length;
      await waitFor(() => ranEveryLoop(b.output().slice(bFrom)), { timeoutMs: 10_000, message: 'the successor runs no rounds' });
    } finally {
      resumedFrom = a.output().length;
      resumedAt = Date.now();
      a.signal('SIGCONT');
    }

    // Several rounds' worth of time for the resumed process.
    await sleep(4000);
    const after = logLines(a.output().slice(resumedFrom));
    const lost = after.filter((l) => l.msg === 'lease lost: stopping singleton work').map((l) => l.work);
    expect(new Set(lost)).toEqual(new Set([...(await holders()).keys()].map((k) => /\{(.+)\}$/.exec(k)![1])));
    const rounds = after.filter((l) => ROUND_LINES.includes(l.msg));
    const started = rounds.map((l) => ({ msg: l.msg, startedAt: l.time - (l.ms ?? 0) }));
    // A round in flight at the pause may end after it; none may begin after the resume.
    expect(started.filter((r) => r.startedAt >= resumedAt)).toEqual([]);
    expect(await holdsAll('rounds-b')).toBe(true);
  });
});
