/**
 * The leader lease across three platform processes (api + cluster roles, PostgreSQL, one Redis,
 * LEADER_TTL_MS 3 s, INSTANCE_TTL_MS 3 s). Each process also runs the probe work under the
 * `cluster` lease (test/fixtures/coordination/probe-platform.ts): every 50 ms, if its term is current,
 * it appends "<instance> <token> <ms>" to a Redis list, so any moment where two instances acted
 * as leader would show in the list. The append is fenced (it goes to a list of refused lines once
 * the lease no longer holds its term): the refused list shows what a stale leader tried.
 *
 * - GET /api/cluster lists the three instances with their roles.
 * - Exactly one leader at every sample (every 250 ms) over a minute: each process's own view
 *   (GET /api/cluster `self.leads`), the lease key and the probe log agree.
 * - SIGSTOP of the leader past its TTL: another instance takes over; after SIGCONT the paused one
 *   stops its singleton work at once (log line, and at most the one append a pause caught between
 *   its check and its write, which the fence refuses) and never acts beside the new leader.
 * - SIGKILL of the leader: a new leader within the TTL (plus the takeover latency), never two at
 *   any sample, and the killed instance leaves GET /api/cluster within the instance TTL.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import type { ApiClient } from '../support/http-client.js';
import type { PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { getWithin, loggedIn, probeEntries, probeTerms, spawnProbePlatform } from './support.js';

const TTL = 3000;
const INSTANCE_TTL = 3000;
const SAMPLE_MS = 250;
/** In the slot of the `cluster` lease, which the probe's fenced append reads. */
const PROBE_KEY = 'test:probe:{cluster}';
const REFUSED_KEY = `${PROBE_KEY}:refused`;
/** Scheduling slack on a shared 2-core machine, added to the bounds the issue states. */
const SLACK = 2000;
const keys = createKeys('wp');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Node {
  id: string;
  proc: PlatformProcess;
  api: ApiClient;
}

describe('leader lease across three processes', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let probe: Redis;
  const nodes: Node[] = [];

  const env = (id: string) =>
    testEnv(redis, db, {
      INSTANCE_ID: id,
      LEADER_TTL_MS: String(TTL),
      INSTANCE_TTL_MS: String(INSTANCE_TTL),
      CONFIG_SYNC_INTERVAL_MS: '1000',
      CONFIG_REFRESH_INTERVAL_MS: '1000',
      DATABASE_POOL_SIZE: '3',
      HTTP_ACCESS_LOG: 'false',
      LOG_LEVEL: 'info',
      PROBE_KEY,
      PROBE_INTERVAL_MS: '50',
    });

  /** Who holds the lease in Redis, and which processes claim to lead (their own view). */
  const sample = async (among: Node[]) => {
    const [value, views] = await Promise.all([probe.get(keys.lease('cluster')), Promise.all(among.map((n) => getWithin(n.api, '/api/cluster', 1000)))]);
    const claimants = among.filter((_, i) => views[i]?.self.leads.some((l: { work: string }) => l.work === 'cluster')).map((n) => n.id);
    return { holder: value?.split('#')[0] ?? null, claimants, answered: views.filter(Boolean).length };
  };
  const leaderNode = async (among: Node[]) => {
    const s = await waitFor(
      async () => {
        const x = await sample(among);
        return x.claimants.length === 1 && x.holder === x.claimants[0] ? x : undefined;
      },
      { timeoutMs: 15_000, message: 'no single leader' },
    );
    return nodes.find((n) => n.id === s.holder)!;
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    probe = new Redis(redis.url);
    db = await createTestDatabase();
    const ids = ['node-1', 'node-2', 'node-3'];
    // The first start creates the admin user (two api processes starting on an empty database race on it).
    const first = await spawnProbePlatform('api,cluster', env(ids[0]!));
    const procs = [first, ...(await Promise.all(ids.slice(1).map((id) => spawnProbePlatform('api,cluster', env(id)))))];
    for (const [i, proc] of procs.entries()) nodes.push({ id: ids[i]!, proc, api: await loggedIn(proc) });
  }, 180_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.proc.stop()));
    probe?.disconnect();
    await redis?.destroy();
    await db?.drop();
  });

  it('lists the three instances with their roles', async () => {
    const status = await waitFor(
      async () => {
        const s = await getWithin(nodes[0]!.api, '/api/cluster', 2000);
        return s?.instances.length === 3 ? s : undefined;
      },
      { timeoutMs: 15_000, message: 'three instances not listed' },
    );
    expect(status.instances.map((i: { id: string }) => i.id)).toEqual(['node-1', 'node-2', 'node-3']);
    for (const i of status.instances) {
      expect(i).toMatchObject({ roles: ['cluster', 'api'], queues: [], works: ['cluster'] });
      expect(Number.isNaN(Date.parse(i.lastSeen))).toBe(false);
    }
    expect(['node-1', 'node-2', 'node-3']).toContain(status.leader);
    // Every process answers with the same registry.
    for (const n of nodes.slice(1)) {
      const other = await getWithin(n.api, '/api/cluster', 2000);
      expect(other.instances.map((i: { id: string }) => i.id)).toEqual(['node-1', 'node-2', 'node-3']);
      expect(other.leader).toBe(status.leader);
    }
  });

  it('has exactly one leader at every sample over a minute', { timeout: 120_000 }, async () => {
    await leaderNode(nodes);
    const before = await probe.llen(PROBE_KEY);
    const samples: Awaited<ReturnType<typeof sample>>[] = [];
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      const next = Date.now() + SAMPLE_MS;
      samples.push(await sample(nodes));
      await sleep(Math.max(0, next - Date.now()));
    }
    expect(samples.length).toBeGreaterThan(150);
    const bad = samples.filter((s) => s.answered === 3 && (s.claimants.length !== 1 || s.claimants[0] !== s.holder));
    expect(bad).toEqual([]);
    // Every process answered most samples (a sample without all three answers counts for nothing above).
    expect(samples.filter((s) => s.answered === 3).length).toBeGreaterThan(samples.length * 0.9);
    // The probe acted all minute, one term after another, never two at once.
    const terms = probeTerms(await probe.lrange(PROBE_KEY, 0, -1));
    expect((await probe.llen(PROBE_KEY)) - before).toBeGreaterThan(300);
    console.log(`one minute: ${samples.length} samples, leaders seen ${[...new Set(samples.map((s) => s.holder))].join(', ')}, probe terms ${terms.length}`);
  });

  it('SIGSTOP of the leader past its TTL: another takes over, and after SIGCONT the paused one stops at once', { timeout: 60_000 }, async () => {
    const paused = await leaderNode(nodes);
    const others = nodes.filter((n) => n !== paused);
    const pausedTerm = probeTerms(await probe.lrange(PROBE_KEY, 0, -1)).at(-1)!;
    expect(pausedTerm.instance).toBe(paused.id);

    paused.proc.signal('SIGSTOP');
    const stoppedAt = Date.now();
    const successor = await leaderNode(others);
    console.log(`SIGSTOP: ${successor.id} took over after ${Date.now() - stoppedAt} ms`);
    // The successor's probe is acting under a newer token.
    await waitFor(async () => probeTerms(await probe.lrange(PROBE_KEY, 0, -1)).at(-1)!.instance === successor.id, {
      timeoutMs: 5000,
      message: 'successor probe silent',
    });
    await sleep(1000);

    const logBefore = paused.proc.output().length;
    const resumedAt = Date.now();
    paused.proc.signal('SIGCONT');
    // The paused process notices at once that its term is over and stops its singleton work.
    await waitFor(() => paused.proc.output().slice(logBefore).includes('lease lost: stopping singleton work'), {
      timeoutMs: 5000,
      message: 'paused leader did not report the lost lease',
    });
    const lost = paused.proc
      .output()
      .slice(logBefore)
      .split('\n')
      .find((l) => l.includes('lease lost'))!;
    expect(JSON.parse(lost)).toMatchObject({ work: 'cluster', term: pausedTerm.token });

    // Over the next seconds: one leader (the successor), the resumed one follows.
    for (let i = 0; i < 12; i++) {
      const s = await sample(nodes);
      expect(s.claimants.length).toBeLessThanOrEqual(1);
      if (s.answered === 3) expect(s.claimants).toEqual([successor.id]);
      await sleep(SAMPLE_MS);
    }
    // Never two at once in the probe log: the paused term ended before the successor's began,
    // and nothing of the paused term arrived after the successor started acting.
    const terms = probeTerms(await probe.lrange(PROBE_KEY, 0, -1));
    const at = terms.findIndex((t) => t.token === pausedTerm.token);
    expect(terms[at + 1]!.instance).toBe(successor.id);
    expect(terms.slice(at + 1).every((t) => t.instance !== paused.id)).toBe(true);
    // What the fence refused: only the paused term's, and none it decided after resuming (its
    // local check stops it first). At most the one append that was between its check and its write
    // when SIGSTOP came, decided before the pause: unfenced, that one would have landed after the
    // successor's (a run under the suite's load once caught the pause there).
    const refused = probeEntries(await probe.lrange(REFUSED_KEY, 0, -1));
    expect(refused.filter((e) => e.instance !== paused.id || e.token !== pausedTerm.token)).toEqual([]);
    expect(refused.filter((e) => e.at >= resumedAt)).toEqual([]);
    expect(refused.length).toBeLessThanOrEqual(1);
    console.log(`SIGSTOP: ${refused.length} append of the paused term, decided before the pause, refused by the fence`);
  });

  it('SIGKILL of the leader: a new one within the TTL, never two at any sample, and the dead one leaves the list', { timeout: 60_000 }, async () => {
    const victim = await leaderNode(nodes);
    const survivors = nodes.filter((n) => n !== victim);
    await victim.proc.kill();
    const killedAt = Date.now();

    let successorAt: number | undefined;
    let goneAt: number | undefined;
    const samples: Awaited<ReturnType<typeof sample>>[] = [];
    while (Date.now() - killedAt < TTL + INSTANCE_TTL + 2 * SLACK && (successorAt === undefined || goneAt === undefined)) {
      const s = await sample(survivors);
      samples.push(s);
      if (successorAt === undefined && s.claimants.length === 1 && s.holder === s.claimants[0]) successorAt = Date.now();
      if (goneAt === undefined) {
        const status = await getWithin(survivors[0]!.api, '/api/cluster', 1000);
        if (status && !status.instances.some((i: { id: string }) => i.id === victim.id)) goneAt = Date.now();
      }
      await sleep(SAMPLE_MS);
    }
    console.log(`SIGKILL: new leader after ${successorAt! - killedAt} ms, dead instance gone after ${goneAt! - killedAt} ms`);
    expect(samples.every((s) => s.claimants.length <= 1)).toBe(true);
    expect(successorAt! - killedAt).toBeLessThanOrEqual(TTL + SLACK);
    expect(goneAt! - killedAt).toBeLessThanOrEqual(INSTANCE_TTL + SLACK);

    const status = await getWithin(survivors[0]!.api, '/api/cluster', 2000);
    expect(status.instances.map((i: { id: string }) => i.id)).toEqual(survivors.map((n) => n.id));
    expect(survivors.map((n) => n.id)).toContain(status.leader);
    probeTerms(await probe.lrange(PROBE_KEY, 0, -1));
  });
});
