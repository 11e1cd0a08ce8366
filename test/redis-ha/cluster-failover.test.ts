/**
 * The platform on a Redis Cluster with replicas (three masters, one replica each, loopback,
 * cluster-node-timeout 1 s): the master holding the crawl queues' slot (and the sessions and the
 * pool the work uses) killed (SIGKILL) mid-work after its replica lagged for a moment
 * (failover-run.ts). The cluster promotes the replica; the platform's connections follow the new
 * slot map by themselves.
 *
 * Without REDIS_REPLICA_ACKS: the work goes on, no job dies, every chain is whole; what the
 * failover lost of what was acknowledged is printed. With REDIS_REPLICA_ACKS=1 (WAIT sent to the
 * master of each key's slot): nothing acknowledged is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../src/queues/partitions.js';
import { ROLE_NAMES } from '../../src/runtime/roles.js';
import { startTestRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { describeReport, runFailover, WORK_ENV, type FailoverTopology } from './failover-run.js';
import { startHaPlatform, type HaPlatform } from './support.js';

const roles = ROLE_NAMES.filter((r) => r !== 'crawler');

describe('the platform on a Redis Cluster with replicas: the master of the queues killed mid-work', () => {
  let cluster: TestRedisCluster;
  let t: HaPlatform | undefined;

  beforeAll(async () => {
    cluster = await startTestRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await t?.stop();
    await cluster?.destroy();
  });

  let slot = 0;
  const topology: FailoverTopology = {
    victim: async (ctx) => {
      slot = keySlot(ctx.queues.layout.target('crawl', 0).prefix);
      const master = await cluster.ownerOf(slot);
      const [replica] = await cluster.replicasOf(master);
      if (replica === undefined) throw new Error(`the master ${master} has no replica`);
      return { master, replica };
    },
    kill: (port) => cluster.kill(port),
    pause: (port) => cluster.pause(port),
    resume: (port) => cluster.resume(port),
    cutReplication: (port) => cluster.cutReplication(port),
    promoted: (old) => cluster.waitForFailover(slot, old),
    rejoin: async (old) => {
      await cluster.restart(old);
      await cluster.waitForReplicas(slot, 1);
    },
  };

  const run = async (prefix: string, mode: string, env: Record<string, string>) => {
    t = await startHaPlatform({ REDIS_CLUSTER_NODES: cluster.seeds }, [...roles], { ...WORK_ENV, REDIS_PREFIX: prefix, ...env });
    try {
      const report = await runFailover(t, topology, mode);
      console.info(describeReport(report));
      return report;
    } finally {
      await t.stop();
      t = undefined;
    }
  };

  it('without REDIS_REPLICA_ACKS: the work goes on by itself, no job dies, the chains stay whole; the acknowledged writes the replica had not received are lost', async () => {
    const report = await run('wpa', 'cluster, no wait', { REDIS_REPLICA_ACKS: '0' });
    expect(report.unexpected).toEqual([]);
    expect(report.deadJobs).toBe(0);
    expect(report.brokenChains).toEqual([]);
    // Pops answered while the replica lagged never reached it: the promoted replica still has
    // their rows in the pool and serves them again. (Messages answered then are lost when no drain
    // took them to the DB first; printed above.)
    expect(report.popsDuringLag).toBeGreaterThan(0);
    expect(report.rowsServedTwice).toBeGreaterThan(0);
  }, 240_000);

  it('with REDIS_REPLICA_ACKS=1: every acknowledged message is read back and stored, no pool row is served twice, the chains stay whole', async () => {
    const report = await run('wpb', 'cluster, REDIS_REPLICA_ACKS=1', { REDIS_REPLICA_ACKS: '1', REDIS_REPLICA_ACK_TIMEOUT_MS: '200' });
    expect(report.unexpected).toEqual([]);
    expect(report.messagesUnreadable).toBe(0);
    expect(report.messagesUnstored).toBe(0);
    expect(report.rowsServedTwice).toBe(0);
    expect(report.brokenChains).toEqual([]);
    expect(report.deadJobs).toBe(0);
  }, 240_000);
});
