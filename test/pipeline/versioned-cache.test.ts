/**
 * The pipeline's read-through caches (src/pipeline/versioned-cache.ts) on a real redis-server: a
 * fill that read the database before an invalidation never installs its stale value, and an
 * invalidation of a value nobody read leaves no key behind (the scheduler invalidates every IP it
 * reconciles; a key per IP was 72 B of Redis per scheduled IP).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging/logger.js';
import { VersionedCache } from '../../src/pipeline/versioned-cache.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

describe('versioned read-through cache', () => {
  let server: TestRedis;
  let redis: Redis;
  let cache: VersionedCache;
  const slot = (id: number) => ({ key: `c:{${id}}`, versionKey: `c:{${id}}:version` });

  beforeAll(async () => {
    server = await startTestRedis();
    redis = new Redis(server.url);
    cache = new VersionedCache(redis, 600, silentLogger());
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.destroy();
  });

  it('reads through, then answers from Redis until invalidated', async () => {
    let loads = 0;
    const load = async () => ({ n: ++loads });
    expect(await cache.read(slot(1), load)).toEqual({ value: { n: 1 }, cached: false });
    await waitFor(async () => (await redis.exists(slot(1).key)) === 1, { message: 'the fill never landed' });
    expect(await cache.read(slot(1), load)).toEqual({ value: { n: 1 }, cached: true });
    await cache.invalidate(slot(1).versionKey, slot(1).key);
    expect(await cache.read(slot(1), load)).toEqual({ value: { n: 2 }, cached: false });
  });

  it('a reader whose database read came before an invalidation does not install its stale value', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The reader misses and reads the database (old row), then stalls before its fill.
    const stale = cache.read(slot(2), async () => {
      await held;
      return { price: 'old' };
    });
    await waitFor(async () => (await redis.exists(slot(2).versionKey)) === 1, { message: 'the miss made no version key' });
    // Meanwhile the row changes and the writer invalidates (the first invalidation this key sees).
    await cache.invalidate(slot(2).versionKey, slot(2).key);
    release();
    expect((await stale).value).toEqual({ price: 'old' });
    // Whatever the late fill did, the next read goes to the database and gets the new row.
    const next = await cache.read(slot(2), async () => ({ price: 'new' }));
    expect(next).toEqual({ value: { price: 'new' }, cached: false });
    await waitFor(async () => (await redis.get(slot(2).key)) === JSON.stringify({ price: 'new' }), { message: 'the fresh fill never landed' });
  });

  it('invalidating values nobody read leaves no key in Redis', async () => {
    const before = await redis.dbsize();
    for (let id = 100; id < 1100; id++) await cache.invalidate(slot(id).versionKey, slot(id).key);
    expect(await redis.dbsize()).toBe(before);
  });
});
