/**
 * The pools over the REST API on one in-process platform (api + pools roles, PostgreSQL):
 * - bad input (unknown type, non-numeric group, empty or oversized items, bad count) → 400
 *   naming the field, and nothing is written;
 * - rows imported in three batches come out in batch_id DESC, id ASC order, each once, through
 *   pop and pop-many, with refills while popping; then 404 pool_empty; every served row ends
 *   consumed in the DB;
 * - two refills started at once push each row once; a refill that lost its lock pushes nothing;
 *   two marking jobs at once mark each popped row once;
 * - after a Redis flush, reserved rows that are in no pool come back through the refill and
 *   no row is served twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wirePools, type PoolDeps } from '../../src/pools/wiring.js';
import { markConsumed } from '../../src/pools/mark-consumed.js';
import { decodeItem } from '../../src/pools/pool-item.js';
import { refillPool } from '../../src/pools/refill-pool.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import {
  drained,
  duplicates,
  importBatch,
  importBatches,
  inServingOrder,
  popMany,
  popOne,
  popUntilDrained,
  poolOverview,
  type Served,
} from './pool-helpers.js';

describe('content pools over the API', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api', 'pools'],
      env: {
        POOL_SIZE: '50',
        POOL_REFILL_THRESHOLD: '30',
        POOL_REFILL_BATCH: '10',
        POOL_CONSUMED_BATCH: '7',
        POOL_TRIGGER_INTERVAL_MS: '10',
        // The periodic check stays out of the way: refills here come from imports and pops.
        POOL_CHECK_INTERVAL_MS: '3600000',
        POOL_MAX_IMPORT_ITEMS: '500',
        POOL_MAX_TEXT_BYTES: '200',
      },
    });
  });
  afterAll(() => t?.stop());

  it('answers bad input with 400 naming the field and writes nothing', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/pools/images/1/pop', undefined, 'type'],
      ['POST', '/api/pools/titles/abc/pop', undefined, 'groupId'],
      ['POST', '/api/pools/titles/-1/pop', undefined, 'groupId'],
      ['POST', '/api/pools/titles/1.5/pop-many', { count: 2 }, 'groupId'],
      ['POST', '/api/pools/titles/99999999999/pop', undefined, 'groupId'],
      ['POST', '/api/pools/titles/1/pop-many', { count: 0 }, 'count'],
      ['POST', '/api/pools/titles/1/pop-many', { count: 101 }, 'count'],
      ['POST', '/api/pools/titles/1/pop-many', { count: '5' }, 'count'],
      ['POST', '/api/pools/titles/1/pop-many', {}, 'count'],
      ['POST', '/api/pools/videos/1/items', { items: [{ text: 'x', batchId: 1 }] }, 'type'],
      ['POST', '/api/pools/titles/x1/items', { items: [{ text: 'x', batchId: 1 }] }, 'groupId'],
      ['POST', '/api/pools/titles/1/items', { items: [] }, 'items'],
      ['POST', '/api/pools/titles/1/items', {}, 'items'],
      ['POST', '/api/pools/titles/1/items', { items: Array.from({ length: 501 }, () => ({ text: 'x', batchId: 1 })) }, 'items'],
      [
        'POST',
        '/api/pools/titles/1/items',
        {
          items: [
            { text: 'ok', batchId: 1 },
            { text: 'x'.repeat(201), batchId: 1 },
          ],
        },
        'items.1.text',
      ],
      ['POST', '/api/pools/titles/1/items', { items: [{ text: '', batchId: 1 }] }, 'items.0.text'],
      ['POST', '/api/pools/titles/1/items', { items: [{ text: 'nul \u0000', batchId: 1 }] }, 'items.0.text'],
      ['POST', '/api/pools/titles/1/items', { items: [{ text: 'x', batchId: 1.5 }] }, 'items.0.batchId'],
      ['POST', '/api/pools/titles/1/items', { items: [{ text: 'x' }] }, 'items.0.batchId'],
      ['POST', '/api/pools/titles/1/items', { items: [{ text: 'x', batchId: 1, extra: true }] }, 'extra'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await t.api.request(method, path, body);
      expect(res.status, `${path} ${JSON.stringify(body)?.slice(0, 80)}`).toBe(400);
      expect(res.body.error.field, `${path} ${JSON.stringify(body)?.slice(0, 80)}`).toBe(field);
    }
    const overview = await t.api.get('/api/pools');
    expect(overview.body.pools).toEqual([]);
    expect((await t.api.withToken(undefined).post('/api/pools/titles/1/pop')).status).toBe(401);
  });

  it('serves rows of three batches once each, newest batch first, through pop and pop-many, then 404', async () => {
    // Batches interleaved in one import: the order is by batch, then id, not by position.
    await importBatches(t.api, 'titles', 7, [
      { batchId: 2, count: 45 },
      { batchId: 3, count: 40 },
      { batchId: 1, count: 35 },
    ]);
    await waitFor(async () => (await poolOverview(t.api, 'titles', 7))?.poolLength === 50, { message: 'pool not filled after import' });

    const stream: Served[] = [];
    for (let round = 0; ; round++) {
      const got = round % 3 === 0 ? await popMany(t.api, 'titles', 7, 1 + (round % 17)) : [await popOne(t.api, 'titles', 7)].filter((x): x is Served => !!x);
      stream.push(...got);
      if (got.length) continue;
      if (await drained(t.api, 'titles', 7)) break;
      await new Promise((r) => setTimeout(r, 50)); // a refill is between its reserve and its push
    }
    expect(stream.length).toBe(120);
    expect(duplicates(stream.map((s) => s.id))).toEqual([]);
    const fromPool = stream.filter((s) => s.source === 'pool');
    expect(fromPool.length).toBeGreaterThan(50); // refills happened while popping
    expect(inServingOrder(fromPool)).toBe(true);
    expect(stream.slice(0, 50).every((s) => s.source === 'pool')).toBe(true);
    expect(inServingOrder(stream.slice(0, 50))).toBe(true);

    const empty = await t.api.post('/api/pools/titles/7/pop');
    expect(empty.status).toBe(404);
    expect(empty.body.error.code).toBe('pool_empty');
    expect(await popMany(t.api, 'titles', 7, 100)).toEqual([]);

    await waitFor(
      async () => {
        const o = await poolOverview(t.api, 'titles', 7);
        return o.poolLength === 0 && o.pendingConsumed === 0 && o.available === 0 && o.reserved === 0;
      },
      { message: 'consumed marks did not land' },
    );
    const { rows } = await t.platform.ctx.db.pool.query(`SELECT status, count(*)::int AS n FROM titles WHERE group_id = 7 GROUP BY status`);
    expect(rows).toEqual([{ status: 'consumed', n: 120 }]);
  });

  describe('refill and marking', () => {
    let deps: PoolDeps;
    beforeAll(() => {
      deps = wirePools(t.platform.ctx, 'test');
    });
    afterAll(() => deps.triggers.close());

    const pooledIds = async (type: 'titles' | 'contents', groupId: number) =>
      (await t.platform.ctx.redis.lrange(t.platform.ctx.keys.pool(type, groupId), 0, -1)).map((raw) => decodeItem(raw).id);

    it('two refills started at once push each row once', async () => {
      await deps.rows.insert(
        'contents',
        3,
        Array.from({ length: 120 }, (_, n) => ({ text: `c-${n}`, batchId: 1 })),
      );
      const outcomes = await Promise.all([refillPool(deps, 'contents', 3), refillPool(deps, 'contents', 3)]);
      const pushed = outcomes.reduce((sum, o) => sum + ('pushed' in o ? o.pushed : 0), 0);
      // Exactly one of them pushes: the other finds the lock taken ("locked") or, when the machine
      // ran the first to its end before the second took the lock, a pool it finds full (it pushes
      // nothing). Either way each row is pushed once.
      expect(outcomes.every((o) => o.status === 'locked' || o.status === 'refilled')).toBe(true);
      expect(outcomes.filter((o) => 'pushed' in o && o.pushed > 0)).toHaveLength(1);
      expect(pushed).toBe(50);
      const ids = await pooledIds('contents', 3);
      expect(ids.length).toBe(50);
      expect(duplicates(ids)).toEqual([]);
      const { rows } = await t.platform.ctx.db.pool.query(`SELECT count(*)::int AS n FROM contents WHERE group_id = 3 AND status = 'reserved'`);
      expect(rows[0].n).toBe(50);

      // Again, two at once on a pool below the threshold: still each row once.
      await deps.lists.pop('contents', 3, 40, () => undefined);
      await Promise.all([refillPool(deps, 'contents', 3), refillPool(deps, 'contents', 3)]);
      const after = await pooledIds('contents', 3);
      expect(after.length).toBe(50);
      expect(duplicates([...after, ...ids.slice(-40)])).toEqual([]);
    });

    it('a pop waits for the rows a refill in flight is pushing instead of answering pool_empty', async () => {
      const { lists, rows } = deps;
      await rows.insert('titles', 8, [
        { text: 'in-flight-0', batchId: 1 },
        { text: 'in-flight-1', batchId: 1 },
      ]);
      // A refill between its reserve and its push: the rows are neither available in the table nor in the list.
      expect(await lists.acquireLock('titles', 8, 'slow-refill', 60_000)).toBe(true);
      const reserved = await rows.reserve('titles', 8, 2);
      expect(reserved.map((r) => r.text)).toEqual(['in-flight-0', 'in-flight-1']);
      const popping = t.api.post('/api/pools/titles/8/pop');
      await new Promise((r) => setTimeout(r, 200));
      expect(
        await lists.pushFenced(
          'titles',
          8,
          'slow-refill',
          60_000,
          reserved.map((r) => ({ id: r.id, text: r.text })),
        ),
      ).toBe(2);
      const res = await popping;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ id: reserved[0]!.id, text: 'in-flight-0', source: 'pool' });
      expect(await lists.releaseLock('titles', 8, 'slow-refill')).toBe(true);
      expect(await popOne(t.api, 'titles', 8)).toEqual({ id: reserved[1]!.id, text: 'in-flight-1', source: 'pool' });
      expect(await popOne(t.api, 'titles', 8)).toBeUndefined();
    });

    it('a refill that lost its lock pushes nothing, and its rows are recovered later', async () => {
      const { lists } = deps;
      expect(await lists.acquireLock('contents', 4, 'old-holder', 60_000)).toBe(true);
      await t.platform.ctx.redis.set(t.platform.ctx.keys.poolRefillLock('contents', 4), 'new-holder'); // old lock expired, taken over
      expect(await lists.pushFenced('contents', 4, 'old-holder', 60_000, [{ id: 1, text: 'stale' }])).toBeUndefined();
      expect(await lists.length('contents', 4)).toBe(0);
      expect(await lists.releaseLock('contents', 4, 'old-holder')).toBe(false);
      expect(await lists.releaseLock('contents', 4, 'new-holder')).toBe(true);

      // Rows reserved by a refill that never pushed them are in no pool: the next refill releases and pushes them.
      await deps.rows.insert(
        'contents',
        4,
        Array.from({ length: 8 }, (_, n) => ({ text: `o-${n}`, batchId: 1 })),
      );
      const orphans = await deps.rows.reserve('contents', 4, 5);
      const t0Before = new Date(Date.now() - 60_000);
      expect(await deps.rows.releaseOrphans('contents', 4, [], t0Before)).toBe(0); // reserved after t0: exempt
      await new Promise((r) => setTimeout(r, 5));
      const outcome = await refillPool(deps, 'contents', 4);
      expect(outcome).toMatchObject({ status: 'refilled', released: 5, pushed: 8 });
      expect((await pooledIds('contents', 4)).sort((a, b) => a - b)).toEqual(expect.arrayContaining(orphans.map((o) => o.id)));
    });
  });

  it('two marking jobs at once mark every popped row once and empty the consumed list', async () => {
    const deps = wirePools(t.platform.ctx, 'test-marking');
    try {
      await deps.rows.insert(
        'contents',
        6,
        Array.from({ length: 40 }, (_, n) => ({ text: `m-${n}`, batchId: 1 })),
      );
      await refillPool(deps, 'contents', 6);
      const popped = (await deps.lists.pop('contents', 6, 33, () => undefined)).items;
      expect(popped.length).toBe(33);
      const stale = await deps.lists.peekConsumed('contents', 6, 5);
      const marking = { ...deps, settings: { consumedBatch: 4 } };
      const [a, b] = await Promise.all([markConsumed(marking, 'contents', 6), markConsumed(marking, 'contents', 6)]);
      expect(a.marked + b.marked).toBeGreaterThanOrEqual(33);
      expect(await t.platform.ctx.redis.llen(t.platform.ctx.keys.poolConsumed('contents', 6))).toBe(0);
      expect(await deps.lists.trimConsumed('contents', 6, stale)).toBe(0); // already removed: nothing more goes
      const { rows } = await t.platform.ctx.db.pool.query(`SELECT id FROM contents WHERE group_id = 6 AND status = 'consumed' ORDER BY id`);
      expect(rows.map((r) => Number(r.id))).toEqual(popped.map((p) => p.id).sort((x, y) => x - y));
    } finally {
      deps.triggers.close();
    }
  });

  it('after a Redis flush, reserved rows in no pool come back and no row is served twice', async () => {
    await importBatch(t.api, 'contents', 9, 1, 80);
    await waitFor(async () => (await poolOverview(t.api, 'contents', 9))?.poolLength === 50, { message: 'pool not filled' });
    const before: Served[] = [];
    for (let i = 0; i < 12; i++) before.push(...(await popMany(t.api, 'contents', 9, 2)));
    expect(before.every((s) => s.source === 'pool')).toBe(true);
    let previous = '';
    const settled = await waitFor(
      async () => {
        const o = await poolOverview(t.api, 'contents', 9);
        const same = JSON.stringify(o) === previous; // unchanged over one interval: the refill is done
        previous = JSON.stringify(o);
        return same && o.pendingConsumed === 0 && o.poolLength === o.reserved ? o : undefined;
      },
      { message: 'marks did not land', intervalMs: 300 },
    );

    await t.platform.ctx.redis.flushall();
    const lost = await poolOverview(t.api, 'contents', 9);
    expect(lost).toMatchObject({ poolLength: 0, pendingConsumed: 0, reserved: settled.poolLength, available: 80 - 24 - settled.poolLength });

    // Until drained: the reserved rows lost with the flush come back only once a refill recovers them.
    const after = await popUntilDrained(t.api, 'contents', 9, 5);
    const all = [...before, ...after];
    expect(duplicates(all.map((s) => s.id))).toEqual([]);
    expect(all.length).toBe(80);
    expect(after.some((s) => s.source === 'pool')).toBe(true); // the released rows went back through the pool
    await waitFor(
      async () => {
        const o = await poolOverview(t.api, 'contents', 9);
        return o.reserved === 0 && o.available === 0 && o.pendingConsumed === 0;
      },
      { message: 'consumed marks did not land after the flush' },
    );
  });
});
