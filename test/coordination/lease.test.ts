/**
 * The lease manager on a real Redis, several "instances" in one process (TTL 1 s): one holder
 * per work, independent works, a refused renewal ends the term at once and its stop is awaited
 * before anyone starts the work again, Redis down ends the term at the local deadline and the
 * work comes back with Redis, shutdown releases the lease for an immediate takeover, a start
 * that throws gives the lease up, fencing tokens grow from term to term.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LeaderTerm } from '../../src/coordination/leadership.js';
import { LeaseManager } from '../../src/coordination/lease-manager.js';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { createKeys } from '../../src/redis/keys.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const TTL = 1000;
const keys = createKeys('wp');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('lease manager', () => {
  let redis: TestRedis;
  let probe: Redis;
  let connections: RedisConnections;
  let managers: LeaseManager[] = [];
  let events: string[] = [];

  const manager = (id: string, ttlMs = TTL) => {
    const client = connections.create('command', `lease-${id}`, { commandTimeoutMs: 300 });
    const m = new LeaseManager({ redis: client, keys, instanceId: id, ttlMs, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) });
    managers.push(m);
    return m;
  };
  /** Singleton work that records its start and stop; stopping takes `stopMs`. */
  const work =
    (id: string, terms: LeaderTerm[] = [], stopMs = 0) =>
    async (term: LeaderTerm) => {
      events.push(`start ${id} ${term.token}`);
      terms.push(term);
      return async () => {
        events.push(`stopping ${id} ${term.token}`);
        await sleep(stopMs);
        events.push(`stopped ${id} ${term.token}`);
      };
    };
  const holders = (work: string) => managers.filter((m) => m.isLeader(work));

  beforeAll(async () => {
    redis = await startTestRedis();
    probe = new Redis(redis.url);
    probe.on('error', () => undefined); // Redis is killed in one test
    connections = new RedisConnections({ kind: 'single', url: redis.url }, { connectTimeoutMs: 500, commandTimeoutMs: 300 }, silentLogger());
  });
  afterEach(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    managers = [];
    events = [];
    await probe.flushall();
  });
  afterAll(async () => {
    await connections?.close();
    probe?.disconnect();
    await redis?.destroy();
  });

  it('gives each work to exactly one of the instances that registered it', async () => {
    const [a, b, c] = [manager('a'), manager('b'), manager('c')];
    for (const m of [a, b, c]) m.whileLeader('shared', work('shared'));
    b.whileLeader('only-b', work('only-b'));
    await waitFor(() => holders('shared').length === 1 && b.isLeader('only-b'), { message: 'no holders' });
    // Over several renewal periods: still one holder, the same one, started once.
    const first = holders('shared')[0];
    for (let i = 0; i < 10; i++) {
      await sleep(150);
      expect(holders('shared')).toHaveLength(1);
      expect(holders('shared')[0]).toBe(first);
      expect(b.isLeader('only-b')).toBe(true);
    }
    expect(events.filter((e) => e.startsWith('start shared'))).toHaveLength(1);
    expect(a.isLeader('only-b') || c.isLeader('only-b')).toBe(false);
    expect(first!.held().map((h) => h.task)).toContain('shared');
    // Without a name: the `cluster` work, which nobody registered here.
    expect(managers.some((m) => m.isLeader())).toBe(false);
  });

  it('ends the term at once when a renewal is refused, and competes again only after its stop returned', async () => {
    const terms: LeaderTerm[] = [];
    const a = manager('a');
    a.whileLeader('w', work('a', terms, 1500));
    await waitFor(() => a.isLeader('w'));
    const term = terms[0]!;
    // Another writer holds the key for 600 ms (as after an expiry during a pause).
    const intrudedAt = performance.now();
    await probe.set(keys.lease('w'), 'intruder#999', 'PX', 600);
    await waitFor(() => !term.isCurrent(), { timeoutMs: TTL, message: 'term still current' });
    // Noticed at the next renewal (every TTL/3), not at the expiry.
    expect(performance.now() - intrudedAt).toBeLessThan(TTL);
    expect(term.signal.aborted).toBe(true);
    expect(a.isLeader('w')).toBe(false);
    expect(a.held()).toEqual([]);
    // The key is free after 600 ms, but the stop takes 1.5 s: the next term starts after it.
    await waitFor(() => terms.length === 2, { timeoutMs: 5000, message: 'the work did not start again' });
    expect(events).toEqual([`start a ${term.token}`, `stopping a ${term.token}`, `stopped a ${term.token}`, `start a ${terms[1]!.token}`]);
    expect(terms[1]!.token).toBeGreaterThan(term.token);
  });

  it('lets one instance take over a work whose holder lost it', async () => {
    const terms: LeaderTerm[] = [];
    const [a, b] = [manager('a'), manager('b')];
    a.whileLeader('w', work('a', terms));
    await waitFor(() => a.isLeader('w'));
    b.whileLeader('w', work('b', terms));
    await probe.set(keys.lease('w'), 'intruder#999', 'PX', 300);
    await waitFor(() => terms.length === 2, { timeoutMs: 5000, message: 'nobody took the work over' });
    await sleep(500);
    expect(holders('w')).toHaveLength(1);
    expect(terms.filter((t) => t.isCurrent())).toHaveLength(1);
  });

  it('stops at the local deadline when Redis is unreachable, and leads again when it returns', async () => {
    const terms: LeaderTerm[] = [];
    const a = manager('a');
    a.whileLeader('w', work('a', terms));
    await waitFor(() => a.isLeader('w'));
    const killedAt = performance.now();
    await redis.kill();
    await waitFor(() => events.includes(`stopped a ${terms[0]!.token}`), { timeoutMs: 3 * TTL, message: 'work not stopped' });
    // Before Redis could have let anyone else in: the last renewal was at most TTL/3 ago.
    expect(performance.now() - killedAt).toBeLessThan(TTL);
    expect(a.isLeader('w')).toBe(false);
    redis = await redis.restart();
    await waitFor(() => a.isLeader('w'), { timeoutMs: 10_000, message: 'not leading after Redis came back' });
    expect(terms).toHaveLength(2);
  });

  it('takes back a lease its own late acquisition left behind, without waiting for its TTL', async () => {
    // A lease of 20 s, far longer than a retry after an error (TTL/10 = 2 s). Another work first:
    // the client is connected and the script in Redis's cache (the paused EVALSHA below runs, no NOSCRIPT).
    const ttlMs = 20_000;
    const a = manager('a', ttlMs);
    a.whileLeader('warm-up', work('a'));
    await waitFor(() => a.isLeader('warm-up'));
    // Writes paused longer than the client's 300 ms timeout: the acquisition fails here and runs
    // when the pause ends, leaving a lease this process never learnt it holds.
    await probe.call('CLIENT', 'PAUSE', '1000', 'WRITE');
    const terms: LeaderTerm[] = [];
    a.whileLeader('w', work('a', terms));
    await waitFor(async () => (await probe.get(keys.lease('w'))) !== null, { message: 'the late acquisition did not run' });
    const orphan = (await probe.get(keys.lease('w')))!;
    expect(orphan).toMatch(/^a#1@/);
    expect(a.isLeader('w')).toBe(false);
    await waitFor(() => a.isLeader('w'), { timeoutMs: ttlMs / 2, message: 'the lease left by the late acquisition was not taken back' });
    expect(terms[0]!.token).toBe(2);
    expect(await probe.get(keys.lease('w'))).toBe(terms[0]!.value);
    // The same owner: the late value was this process's.
    expect(terms[0]!.value.slice(terms[0]!.value.indexOf('@'))).toBe(orphan.slice(orphan.indexOf('@')));
  });

  it('releases the lease on shutdown so that another instance takes over without waiting for the TTL', async () => {
    const long = 6000;
    const [a, b] = [manager('a', long), manager('b', long)];
    a.whileLeader('w', work('a', [], 200));
    await waitFor(() => a.isLeader('w'));
    b.whileLeader('w', work('b'));
    await sleep(300);
    expect(b.isLeader('w')).toBe(false);
    await a.stop();
    expect(events.slice(-1)[0]).toMatch(/^stopped a /);
    // Released (not left to expire): b sees the free key at its next attempt (every TTL/3 at most).
    expect(await probe.get(keys.lease('w'))).toBeNull();
    const releasedAt = performance.now();
    await waitFor(() => b.isLeader('w'), { timeoutMs: long, message: 'b did not take over' });
    expect(performance.now() - releasedAt).toBeLessThan(long / 2);
  });

  it('gives the lease up when the work fails to start', async () => {
    const [a, b] = [manager('a'), manager('b')];
    a.whileLeader('w', async () => {
      events.push('start a (fails)');
      throw new Error('cannot start');
    });
    await waitFor(() => events.includes('start a (fails)'));
    b.whileLeader('w', work('b'));
    await waitFor(() => b.isLeader('w'), { timeoutMs: 5000, message: 'b never got the work' });
    expect(a.isLeader('w')).toBe(false);
  });

  it('starts a work registered during a term within that term', async () => {
    const a = manager('a');
    a.whileLeader('w', work('first'));
    await waitFor(() => a.isLeader('w'));
    a.whileLeader('w', work('second'));
    await waitFor(() => events.some((e) => e.startsWith('start second')));
    const token = a.held()[0]!.token;
    expect(events).toEqual([`start first ${token}`, `start second ${token}`]);
    await a.stop();
    expect(events.filter((e) => e.startsWith('stopped'))).toHaveLength(2);
  });
});
