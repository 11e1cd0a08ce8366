/**
 * What an operator sees when a Redis Cluster goes away under a platform connection: ioredis'
 * Cluster reports its nodes' errors as 'node error' and a lost cluster only as a status change, so
 * without RedisConnections' own listeners the outage would leave no log line while every command
 * fails with "Cluster isn't ready".
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForReady } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { startTestRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { waitFor } from '../support/wait.js';

describe('cluster connection logs', () => {
  let cluster: TestRedisCluster;
  beforeAll(async () => {
    cluster = await startTestRedisCluster();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('logs a cluster that lost its nodes once as an outage, and the node errors without flooding', async () => {
    const lines: { level: number; msg: string; connection?: string; node?: string; err?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const connections = new RedisConnections(
      { kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
      { connectTimeoutMs: 1000, commandTimeoutMs: 500 },
      pino({ level: 'info' }, sink),
    );
    const client = connections.create('command', 'outage-probe');
    try {
      await waitForReady(client);
      // Keys on every master, so that the client holds a connection to each.
      for (let i = 0; i < 30; i++) await client.set(`probe:${i}`, '1');
      expect(lines).toEqual([]);

      for (const node of cluster.nodes) await node.kill();
      // Commands keep failing while the cluster is gone; the log says so once, not per retry.
      for (let i = 0; i < 15; i++) {
        await expect(client.set('probe:0', '1')).rejects.toThrow();
        await new Promise((r) => setTimeout(r, 100));
      }
      await waitFor(() => lines.some((l) => l.msg === 'redis cluster node connection error'), { timeoutMs: 10_000, message: 'no node error logged' });

      const outage = lines.filter((l) => l.msg === 'redis connection error; reconnecting');
      expect(outage).toHaveLength(1);
      expect(outage[0]).toMatchObject({ level: 40, connection: 'outage-probe' });
      const nodeErrors = lines.filter((l) => l.msg === 'redis cluster node connection error');
      expect(nodeErrors).toHaveLength(1);
      expect(nodeErrors[0]).toMatchObject({ level: 40, connection: 'outage-probe', err: expect.stringMatching(/ECONNREFUSED/) });
      expect(cluster.nodes.map((n) => `127.0.0.1:${n.port}`)).toContain(nodeErrors[0]!.node);
    } finally {
      const before = lines.length;
      await connections.close();
      // Closing is not an outage.
      expect(lines.slice(before)).toEqual([]);
    }
  });
});
