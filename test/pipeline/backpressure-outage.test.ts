/**
 * The crawl scheduler's backpressure loop through a Redis outage, as an operator reads it: a
 * platform process (cluster and pipeline roles, a round every 100 ms) whose Redis is stopped for
 * a few dozen rounds and started again. /metrics counts every failed round; the log says the
 * rounds fail once, when they begin to, and once when one succeeds again, with how many failed
 * (before: one warning a round, 10 a second here, 60 a minute at the default tick). An outage
 * that outlasts the leader's lease ends the loop with its term: then that closes the log instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const FAILED_LINE = 'backpressure round failed; the next rounds retry (logged again when one succeeds or the term ends)';
const BACK_LINE = 'backpressure rounds succeed again';
const TERM_END_LINE = 'backpressure rounds end with the term, still failing';
/** Short enough that an outage can outlast the lease (its local deadline is 9/10 of it), long enough for OUTAGE_ROUNDS. */
const LEADER_TTL_MS = 12_000;
/** Failed rounds the outage lasts at least. */
const OUTAGE_ROUNDS = 20;

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  work?: string;
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
    p = await spawnPlatform(
      'cluster,pipeline',
      testEnv(redis, db, {
        LOG_LEVEL: 'info',
        SCHEDULER_TICK_MS: '100',
        METRICS_PUBLIC: 'true',
        LEADER_TTL_MS: String(LEADER_TTL_MS),
      }),
      {
        startTimeoutMs: 90_000,
      },
    );
    metricsUrl = /Metrics\s+(http:\/\/\S+\/metrics)/.exec(p.output())![1]!;
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    await db?.drop();
    await redis?.destroy();
  });

  /**
   * Once rounds run, stops Redis until `until` is met and starts it again. Returns where the
   * output and the failed-rounds count stood when Redis stopped.
   */
  async function redisDownUntil(until: (at: { from: number; failedBefore: number }) => Promise<unknown>): Promise<{ from: number; failedBefore: number }> {
    await waitFor(async () => (await rounds('ok')) >= 3, { timeoutMs: 30_000, message: 'no backpressure round ran' });
    const at = { failedBefore: await rounds('failed'), from: p.output().length };
    await redis.stop();
    try {
      await until(at);
    } finally {
      redis = await redis.restart();
    }
    return at;
  }

  it('logs the failures once when they begin and once when a round succeeds again; the metrics count every one', { timeout: 120_000 }, async () => {
    const { from, failedBefore } = await redisDownUntil(({ failedBefore }) =>
      waitFor(async () => (await rounds('failed')) - failedBefore >= OUTAGE_ROUNDS, {
        timeoutMs: 60_000,
        message: `fewer than ${OUTAGE_ROUNDS} rounds failed while Redis was down`,
      }),
    );
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

  it('closes the log when the outage outlasts the lease and the loop ends with its term', { timeout: 120_000 }, async () => {
    const { from, failedBefore } = await redisDownUntil(({ from }) =>
      waitFor(() => lines(from).some((l) => l.msg === TERM_END_LINE), { timeoutMs: 3 * LEADER_TTL_MS, message: 'the loop did not end with its term' }),
    );
    const failedDuring = (await rounds('failed')) - failedBefore;

    expect(lines(from).some((l) => l.msg === 'lease lost: stopping singleton work' && l.work === 'crawl-scheduler')).toBe(true);
    const during = lines(from).filter((l) => l.component === 'crawl-scheduler');
    expect(during.map((l) => l.msg)).toEqual([FAILED_LINE, TERM_END_LINE]);
    expect(during[1]!.failedRounds).toBe(failedDuring);
    expect(failedDuring).toBeGreaterThan(0);
  });
});
