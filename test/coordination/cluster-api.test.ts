/**
 * GET /api/cluster and /api/cluster/config on one process (cluster + api roles): the process
 * leads, lists itself with its roles, publishes the shared config computed from the DB, publishes
 * a new version only when the DB changed, exports the cluster metrics, and on shutdown releases
 * its lease and leaves the registry.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

describe('cluster API on one process', () => {
  let redis: TestRedis;
  let t: TestPlatform;
  let probe: Redis;
  const keys = createKeys('wp');

  beforeAll(async () => {
    redis = await startTestRedis();
    probe = new Redis(redis.url);
    t = await startTestPlatform({
      roles: ['cluster', 'api'],
      redis,
      env: { CONFIG_REFRESH_INTERVAL_MS: '200', CONFIG_SYNC_INTERVAL_MS: '200', LEADER_TTL_MS: '3000', INSTANCE_TTL_MS: '3000', INSTANCE_ID: 'solo-1' },
    });
  });
  afterAll(async () => {
    await t?.stop();
    probe?.disconnect();
    await redis?.destroy();
  });

  it('needs a token', async () => {
    const anon = t.api.withToken(undefined);
    expect((await anon.get('/api/cluster')).status).toBe(401);
    expect((await anon.get('/api/cluster/config')).status).toBe(401);
  });

  it('shows this instance as the leader and lists it with its roles', async () => {
    const status = await waitFor(
      async () => {
        const res = await t.api.get('/api/cluster');
        // The process loads the version it published right after publishing it (and before the next sample).
        return res.body.leader === 'solo-1' &&
          res.body.configVersion >= 1 &&
          res.body.self.config?.version === res.body.configVersion &&
          res.body.instances.length === 1
          ? res.body
          : undefined;
      },
      { timeoutMs: 15_000, message: 'no leader / config / registry entry' },
    );
    expect(status.redis).toBe('ok');
    expect(status.instances[0]).toMatchObject({ id: 'solo-1', roles: ['cluster', 'api'], queues: [], works: ['cluster'] });
    expect(Date.now() - Date.parse(status.instances[0].lastSeen)).toBeLessThan(10_000);
    expect(status.leases).toEqual([{ work: 'cluster', holder: 'solo-1', token: expect.any(Number) }]);
    expect(status.self.leads.map((l: { work: string }) => l.work)).toEqual(['cluster']);
    expect(status.self.config).toMatchObject({ source: 'shared', version: status.configVersion, generatedBy: 'solo-1' });
  });

  it('publishes the active pool groups from the DB, with a new version only when they change', async () => {
    const prisma = t.platform.ctx.db.prisma;
    const before = (await t.api.get('/api/cluster/config')).body;
    expect(before.content).toEqual({ poolGroups: { titles: [], contents: [] } });

    // One transaction, so that the leader's next round sees all of it.
    await prisma.$transaction([
      prisma.poolTitle.createMany({
        data: [
          { groupId: 5, batchId: 1, text: 'a' },
          { groupId: 2, batchId: 1, text: 'b', status: 'reserved' },
        ],
      }),
      prisma.poolContent.createMany({
        data: [
          { groupId: 8, batchId: 1, text: 'used', status: 'consumed' },
          { groupId: 9, batchId: 1, text: 'c' },
        ],
      }),
    ]);

    const after = await waitFor(
      async () => {
        const res = await t.api.get('/api/cluster/config');
        return res.body.version > before.version ? res.body : undefined;
      },
      { timeoutMs: 10_000, message: 'no new version' },
    );
    expect(after.source).toBe('shared');
    expect(after.content).toEqual({ poolGroups: { titles: [2, 5], contents: [9] } });
    // Published in Redis as the reference does: JSON with the version, TTL about an hour.
    const stored = JSON.parse((await probe.get(keys.sharedConfig()))!);
    expect(stored).toMatchObject({ version: after.version, generatedBy: 'solo-1', content: after.content });
    expect(Number(await probe.get(keys.sharedConfigVersion()))).toBe(after.version);
    expect(await probe.pttl(keys.sharedConfig())).toBeGreaterThan(3500_000);

    // Nothing changes for 10 refresh periods: same version, not reloaded.
    await new Promise((r) => setTimeout(r, 2000));
    const later = (await t.api.get('/api/cluster/config')).body;
    expect(later.version).toBe(after.version);
    expect(later.loadedAt).toBe(after.loadedAt);
  });

  it('exports the is-leader gauge, the leader changes counter and the config version', async () => {
    const version = (await t.api.get('/api/cluster/config')).body.version;
    const text = (await t.api.get('/metrics')).body as string;
    expect(text).toMatch(/^wp_cluster_is_leader\{work="cluster"\} 1$/m);
    expect(text).toMatch(/^wp_cluster_leader_changes_total\{work="cluster",event="acquired"\} 1$/m);
    expect(text).toMatch(new RegExp(`^wp_cluster_config_version ${version}$`, 'm'));
    expect(text).toMatch(/^wp_cluster_config_local 0$/m);
  });

  it('releases its lease and leaves the registry when it stops', async () => {
    expect(await probe.get(keys.lease('cluster'))).toMatch(/^solo-1#\d+@[0-9a-f-]{36}$/);
    await t.platform.stop();
    expect(await probe.get(keys.lease('cluster'))).toBeNull();
    expect(await probe.get(keys.instance('solo-1'))).toBeNull();
    expect(await probe.zrange(keys.instanceIndex(), 0, '-1')).toEqual([]);
  });
});
