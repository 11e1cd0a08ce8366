/**
 * Invariants 4 and 7 for the pools when Redis goes away: with Redis stopped mid-run, pops go on
 * from the DB (source "db"); once Redis is back, pops come from the pool again; no row is served
 * twice across the switch, and every served row ends consumed in the DB. AUTH_FAIL_OPEN=true,
 * since by default the token check itself refuses requests while Redis is down.
 *
 * Under load a pop may miss its 500 ms deadline while Redis is up: its rows are put back and
 * served later (pool-late-reply.test.ts), so nothing is lost then, and rows are out of order
 * only by those put back. The only rows that can be lost are those of pops cut off by the stop
 * (Redis may have run them; nobody can tell), which the API counts in wp_pool_rows_in_doubt_total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { drained, duplicates, importBatches, metricValue, outOfOrder, popMany, popOne, poolOverview, type Served } from './pool-helpers.js';

describe('pools with Redis stopped mid-run', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api', 'pools'],
      env: {
        AUTH_FAIL_OPEN: 'true',
        POOL_SIZE: '100',
        POOL_REFILL_THRESHOLD: '40',
        POOL_REFILL_BATCH: '25',
        // A refill cut off by the stop keeps its lock until it expires: keep that short here.
        POOL_REFILL_LOCK_SECONDS: '3',
        POOL_CHECK_INTERVAL_MS: '500',
        POOL_TRIGGER_INTERVAL_MS: '20',
        REDIS_COMMAND_TIMEOUT_MS: '500',
        WORKER_STALLED_INTERVAL_MS: '2000',
      },
    });
  });
  afterAll(() => t?.stop());

  it('serves from the DB while Redis is down, from the pool again after, each row once', async () => {
    await importBatches(t.api, 'titles', 5, [
      { batchId: 1, count: 200 },
      { batchId: 2, count: 200 },
      { batchId: 3, count: 200 },
    ]);
    await waitFor(async () => (await poolOverview(t.api, 'titles', 5))?.poolLength === 100, { message: 'pool not prefilled' });

    const streams: Served[][] = [[], [], [], []];
    let phase: 'before' | 'down' | 'after' = 'before';
    const byPhase: Record<string, Served[]> = { before: [], down: [], after: [] };
    const dbPopsWhileDown = () => byPhase.down!.filter((s) => s.source === 'db').length;
    const client = async (stream: Served[], useMany: boolean) => {
      for (;;) {
        // Enough DB pops seen while Redis is down: wait for the restart, so that rows are left for
        // the pool to serve after it (the DB fallback would otherwise take every available row).
        if (phase === 'down' && dbPopsWhileDown() >= 60) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const current = phase;
        const got = useMany ? await popMany(t.api, 'titles', 5, 3) : [await popOne(t.api, 'titles', 5)].filter((x): x is Served => !!x);
        if (!got.length) {
          // Empty while Redis is still reconnecting (the DB has no available rows, the pool still
          // holds reserved ones), or while rows a refill reserved when Redis stopped wait for their
          // recovery: only a pool and a table that are both drained end the run.
          if (await drained(t.api, 'titles', 5)) return;
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        stream.push(...got);
        byPhase[current]!.push(...got);
      }
    };
    const running = Promise.all(streams.map((s, i) => client(s, i % 2 === 1)));

    await waitFor(() => byPhase.before!.length >= 120, { message: 'no pops before the outage' });
    // While Redis is up no row is in doubt, however late a reply comes.
    expect(await metricValue(t.api, 'wp_pool_rows_in_doubt_total')).toBe(0);
    await t.redis.stop();
    phase = 'down';
    await waitFor(() => dbPopsWhileDown() >= 60, { timeoutMs: 30_000, message: 'no DB pops while Redis is down' });
    t.redis = await t.redis.restart();
    phase = 'after';
    await running;

    const all = streams.flat();
    expect(duplicates(all.map((s) => s.id))).toEqual([]);
    // Rows missing are rows of pops the stop cut off (recorded consumed, never served twice):
    // counted by the API. Those pops were in flight when the connection dropped: each client's
    // current request (2 x 1 + 2 x 3 rows at most), and late pops, whose requests were answered
    // from the DB before the stop.
    const inDoubt = await metricValue(t.api, 'wp_pool_rows_in_doubt_total', { type: 'titles' });
    const putBack = await metricValue(t.api, 'wp_pool_put_back_rows_total', { type: 'titles' });
    expect(600 - all.length).toBeLessThanOrEqual(inDoubt);
    expect(inDoubt).toBeLessThanOrEqual(2 * 1 + 2 * 3 + byPhase.before!.filter((s) => s.source === 'db').length);
    expect(byPhase.before!.some((s) => s.source === 'pool')).toBe(true);
    expect(byPhase.down!.filter((s) => s.source === 'db').length).toBeGreaterThanOrEqual(60);
    // A pool pop that started after the stop was answered by the restarted Redis, whichever phase
    // its request started in.
    expect([...byPhase.down!, ...byPhase.after!].filter((s) => s.source === 'pool').length).toBeGreaterThan(0);
    // Each client's pooled rows come in serving order (the DB fallback takes rows after the pooled
    // ones), but for rows put back after a late reply: served next, to whichever client pops next.
    expect(streams.reduce((n, s) => n + outOfOrder(s.filter((x) => x.source === 'pool')), 0)).toBeLessThanOrEqual(putBack);

    let last: unknown;
    await waitFor(
      async () => {
        const o = (last = await poolOverview(t.api, 'titles', 5));
        return o.available === 0 && o.reserved === 0 && o.pendingConsumed === 0;
      },
      { timeoutMs: 30_000, message: 'consumed marks did not land after the outage' },
    ).catch((err) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(last)}`);
    });
    const { rows } = await t.platform.ctx.db.pool.query(`SELECT status, count(*)::int AS n FROM titles WHERE group_id = 5 GROUP BY status`);
    expect(rows).toEqual([{ status: 'consumed', n: 600 }]);
    console.log(`pools Redis outage: ${all.length} of 600 rows served (${inDoubt} in doubt at the stop, ${putBack} put back after late replies)`);
  });
});
