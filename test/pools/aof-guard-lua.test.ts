/**
 * The AOF guard's Lua (src/pools/aof-guard.ts) on a real redis-server: it refuses while INFO
 * persistence reports a background fsync running and lets the script go on otherwise. Which case
 * a real server is in cannot be chosen (the fsync runs once a second for a few milliseconds), so
 * the reading is checked on INFO texts given to the guard in place of its INFO call: the server's
 * own text, and the same with a running fsync. test/pools/pool-redis-killed.test.ts shows what
 * the guard is for (no pool row served twice after a kill during an fsync).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AOF_BUSY, aofGuardLua } from '../../src/pools/aof-guard.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

const INFO_CALL = "redis.pcall('INFO', 'persistence')";

let server: TestRedis;
let redis: Redis;

beforeAll(async () => {
  server = await startTestRedis();
  redis = new Redis(server.url);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.destroy();
});

/** The guard with `info` as its INFO text; 'ran' when the script went past it. */
async function guardOn(info: unknown): Promise<string> {
  expect(aofGuardLua).toContain(INFO_CALL);
  const script = `${aofGuardLua.replace(INFO_CALL, 'cjson.decode(ARGV[1]).info')}\nreturn 'ran'`;
  return String(await redis.eval(script, 0, JSON.stringify({ info })).catch((err: Error) => err.message));
}

describe('the AOF guard of the pop scripts, on a real Redis', () => {
  it('goes on when no fsync runs, refuses while one does', async () => {
    const info = await redis.info('persistence');
    expect(info).toContain('aof_enabled:1');
    expect(info).toMatch(/aof_pending_bio_fsync:0\r\n/);
    await expect(guardOn(info)).resolves.toBe('ran');
    const running = info.replace('aof_pending_bio_fsync:0', 'aof_pending_bio_fsync:1');
    await expect(guardOn(running)).resolves.toMatch(new RegExp(`^${AOF_BUSY} `));
    await expect(guardOn(info.replace('aof_pending_bio_fsync:0', 'aof_pending_bio_fsync:12'))).resolves.toMatch(new RegExp(`^${AOF_BUSY} `));
  });

  it('guards nothing where INFO does not tell (no AOF, INFO refused)', async () => {
    await expect(guardOn('# Persistence\r\nloading:0\r\naof_enabled:0\r\n')).resolves.toBe('ran');
    await expect(guardOn('')).resolves.toBe('ran');
    await expect(guardOn('aof_pending_bio_fsync:')).resolves.toBe('ran');
    await expect(guardOn(null)).resolves.toBe('ran');
  });

  it('runs as written on the server (an idle one has no fsync running)', async () => {
    await expect(redis.eval(`${aofGuardLua}\nreturn 'ran'`, 0)).resolves.toBe('ran');
  });
});
