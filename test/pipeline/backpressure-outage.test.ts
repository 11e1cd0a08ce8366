/**
 * The crawl scheduler's backpressure loop through a Redis outage, as an operator reads it: a
 * platform process (cluster and pipeline roles, a round every 100 ms) whose Redis is stopped for
 * a few dozen rounds and started again. /metrics counts every failed round; the log says the
 * rounds fail once, when they begin to, and once when one succeeds again, with how many failed
 * (before: one warning a round, 10 a second here, 60 a minute at the default tick).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const FAILED_LINE = 'backpressure round failed; the next rounds retry (logged again when one succeeds)';
const BACK_LINE = 'backpressure rounds succeed again';
/** Failed rounds the outage lasts at least. */
const OUTAGE_ROUNDS = 20;

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  failedRounds?: number;
}

describe('backpressure rounds while Redis is down', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let p: PlatformProcess;
  let metricsUrl: string;

  const lines = (from = 0): LogLine[] =>
    p
      .output()
      .slice(from)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  const rounds = async (outcome: 'ok' | 'failed'): Promise<number> => {
    const text = await (await fetch(metricsUrl)).text();
    return Number(new RegExp(`^wp_scheduler_backpressure_rounds_total\\{outcome="${outcome}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    p = await spawnPlatform('cluster,pipeline', testEnv(redis, db, { LOG_LEVEL: 'info', SCHEDULER_TICK_MS: '100', METRICS_PUBLIC: 'true' }), {
      startTimeoutMs: 90_000,
    });
    metricsUrl = /Metrics\s+(http:\/\/\S+\/metrics)/.exec(p.output())![1]!;
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    await db?.drop();
    await redis?.destroy();
  });

  it('logs the failures once when they begin and once when a round succeeds again; the metrics count every one', { timeout: 120_000 }, async () => {
    await waitFor(async () => (await rounds('ok')) >= 3, { timeoutMs: 30_000, message: 'no backpressure round ran' });
    const failedBefore = await rounds('failed');
    const from = p.output().length;

    await redis.stop();
    try {
      await waitFor(async () => (await rounds('failed')) - failedBefore >= OUTAGE_ROUNDS, {
        timeoutMs: 60_000,
        message: `fewer than ${OUTAGE_ROUNDS} rounds failed while Redis was down`,
      });
    } finally {
      redis = await redis.restart();
    }
    const okBefore = await rounds('ok');
    await waitFor(async () => (await rounds('ok')) > okBefore, { timeoutMs: 30_000, message: 'no round succeeded after Redis came back' });
    const failedDuring = (await rounds('failed')) - failedBefore;

    const during = lines(from).filter((l) => l.component === 'crawl-scheduler' && l.level >= 40);
    expect(during.map((l) => l.msg)).toEqual([FAILED_LINE]);
    const back = lines(from).filter((l) => l.msg === BACK_LINE);
    expect(back).toHaveLength(1);
    // The line counts this outage's failed rounds, as the metric does (no round fails once one succeeded).
    expect(back[0]!.failedRounds).toBe(failedDuring);
    expect(failedDuring).toBeGreaterThanOrEqual(OUTAGE_ROUNDS);
  });
});
