/**
 * The two Redis primitives of a refresh, against a real Redis: the per-feed lock (SET NX with
 * the job id, re-entrant for that job, released only by its holder) and the per-domain gate
 * (FIFO reservations, one request in flight, the interval counted from the end of an exchange,
 * Retry-After holding the domain back, a crashed holder's lease running out).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainGate } from '../../src/feeds/domain-gate.js';
import { FeedLock } from '../../src/feeds/feed-lock.js';
import { createKeys } from '../../src/redis/keys.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

const keys = createKeys('wp');

describe('feed lock and domain gate', () => {
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

  it('lock: one holder at a time, re-entrant for the same job, released only by its holder, with a TTL', async () => {
    const lock = new FeedLock(redis, keys, 180_000);
    expect(await lock.acquire(7, 'job-a')).toEqual({ acquired: true, holder: 'job-a' });
    expect(await lock.acquire(7, 'job-b')).toEqual({ acquired: false, holder: 'job-a' });
    expect(await lock.acquire(7, 'job-a')).toEqual({ acquired: true, holder: 'job-a' });
    expect(await redis.pttl(keys.feedLock(7))).toBeGreaterThan(170_000);
    expect(await lock.release(7, 'job-b')).toBe(false);
    expect(await lock.holder(7)).toBe('job-a');
    expect(await lock.release(7, 'job-a')).toBe(true);
    expect(await lock.acquire(7, 'job-b')).toEqual({ acquired: true, holder: 'job-b' });
  });

  it('gate: FIFO reservations, one request in flight, interval from the end of the previous exchange', async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 1000, leaseMs: 30_000 });
    expect(await gate.acquire('a.test', 'j1')).toBe(0);
    const w2 = await gate.acquire('a.test', 'j2');
    const w3 = await gate.acquire('a.test', 'j3');
    expect(w2).toBeGreaterThanOrEqual(1000); // j1 is in flight: at least one interval after it ends
    expect(w3).toBeGreaterThan(w2 + 900); // the next reserved slot, one step later
    expect(Math.abs((await gate.acquire('a.test', 'j3')) - w3)).toBeLessThan(200); // asking again keeps the place in line
    expect(await gate.acquire('b.test', 'j9')).toBe(0); // another domain is independent

    await sleep(300);
    await gate.release('a.test', 'j1');
    const afterRelease = await gate.acquire('a.test', 'j2');
    expect(afterRelease).toBeGreaterThan(900); // counted from j1's end, not its start
    expect(afterRelease).toBeLessThanOrEqual(1001); // times are whole ms, the end rounded up
  });

  it("gate: a Retry-After holds the whole domain back, and a crashed holder's lease runs out", async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 100, leaseMs: 300 });
    expect(await gate.acquire('c.test', 'j1')).toBe(0);
    await gate.release('c.test', 'j1', 5000);
    expect(await gate.acquire('c.test', 'j2')).toBeGreaterThan(4800);

    expect(await gate.acquire('d.test', 'crashed')).toBe(0); // never released
    expect(await gate.acquire('d.test', 'j3')).toBeGreaterThanOrEqual(100);
    await sleep(450); // lease over, and past the reserved slot
    expect(await gate.acquire('d.test', 'j3')).toBe(0);
  });

  it('gate: a release hands the next turn to the first job in line; a job further back waits longer, as a fallback', async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 1000, leaseMs: 30_000 });
    expect(await gate.acquire('g.test', 'j1')).toBe(0);
    const w2 = await gate.acquire('g.test', 'j2');
    const w3 = await gate.acquire('g.test', 'j3');
    expect(w3 - w2).toBeGreaterThan(1000); // its slot one step later, and half an interval more per job ahead
    await sleep(200);
    const before = Date.now();
    const handOver = await gate.release('g.test', 'j1');
    expect(handOver?.jobId).toBe('j2');
    expect(handOver!.at - before).toBeGreaterThanOrEqual(990); // the end of j1's exchange + the interval
    expect(handOver!.at - Date.now()).toBeLessThanOrEqual(1001);
    expect(Math.abs((await gate.acquire('g.test', 'j2')) - (handOver!.at - Date.now()))).toBeLessThan(100); // j2's place moved to its turn
  });

  it('gate: a turn given back unused (cancel) records nothing and goes to the first job in line at once', async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 1000, leaseMs: 30_000 });
    expect(await gate.acquire('h.test', 'j1')).toBe(0);
    expect(await gate.acquire('h.test', 'j2')).toBeGreaterThanOrEqual(1000);
    const handOver = await gate.cancel('h.test', 'j1');
    expect(handOver?.jobId).toBe('j2');
    expect(handOver!.at - Date.now()).toBeLessThanOrEqual(0); // no request was made: the domain is free now
    expect(await redis.hget(keys.domainNextSlot('h.test'), 'last')).toBeNull();
    expect(await gate.acquire('h.test', 'j2')).toBe(0);
    // A job that leaves the line while another request is in flight hands nothing over.
    expect(await gate.acquire('h.test', 'j3')).toBeGreaterThan(0);
    expect(await gate.acquire('h.test', 'j4')).toBeGreaterThan(0);
    expect(await gate.cancel('h.test', 'j3')).toBeUndefined();
    expect(await redis.zrange(keys.domainLine('h.test'), '0', '-1')).toEqual(['j4']);
  });

  it('gate: a job reserves its place as it is queued; its first acquire keeps that place', async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 1000, leaseMs: 30_000 });
    expect(await gate.reserve('r.test', 'j1')).toBe(0); // the domain is free: it may go as soon as it runs
    const w2 = await gate.reserve('r.test', 'j2');
    expect(w2).toBeGreaterThanOrEqual(1050); // one step after j1's place, and a fallback margin for the job ahead
    expect(await redis.hget(keys.domainNextSlot('r.test'), 'holder')).toBeNull(); // reserving takes no turn
    expect(await gate.acquire('r.test', 'j1')).toBe(0);
    expect(Math.abs((await gate.acquire('r.test', 'j2')) - w2)).toBeLessThan(200);
    expect(await redis.zrange(keys.domainLine('r.test'), '0', '-1')).toEqual(['j2']);
    // With no interval there is no line to keep.
    const free = new DomainGate(redis, keys, { minIntervalMs: 0, leaseMs: 30_000 });
    expect(await free.reserve('s.test', 'j1')).toBe(0);
    expect(await redis.exists(keys.domainLine('s.test'))).toBe(0);
  });

  it('gate with an interval of 0 still lets one request per domain out at a time', async () => {
    const gate = new DomainGate(redis, keys, { minIntervalMs: 0, leaseMs: 30_000 });
    expect(await gate.acquire('e.test', 'j1')).toBe(0);
    expect(await gate.acquire('e.test', 'j2')).toBeGreaterThan(0);
    await gate.release('e.test', 'j1');
    expect(await gate.acquire('e.test', 'j2')).toBe(0);
  });
});
