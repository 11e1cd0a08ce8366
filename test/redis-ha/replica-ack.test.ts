/**
 * The wait for replicas (src/redis/replica-ack.ts) and READONLY handling (src/redis/connection.ts)
 * against real servers on loopback:
 * - a master with one replica: a write is confirmed (also one queued before the connection was
 *   up); with the replica stopped, or more replicas required than exist, the write is done but
 *   reported as a shortfall after the timeout; a reconnect between the write and WAIT is a
 *   shortfall too (WAIT on a new connection would report replicas that never saw the write);
 * - a Redis Cluster with replicas: WAIT goes to the master of the key's slot (a write on a master
 *   whose replica is stopped falls short, one on another master is confirmed);
 * - a master demoted under a connection: writes answered READONLY make the connection reconnect
 *   and send them again, and they land once the server is a master again.
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/key-slot.js';
import { createRedisClient, type RedisClient } from '../../src/redis/connection.js';
import { ReplicaAck, ReplicaAckError } from '../../src/redis/replica-ack.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { startTestRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { waitFor } from '../support/wait.js';

const OPTIONS = { connectTimeoutMs: 1000, commandTimeoutMs: 1000 };
/** The WAIT limit where the replica is to confirm: WAIT returns at its answer, so only a stalled replica makes it count. */
const CONFIRM_WITHIN_MS = 5000;
/** The client's own command limit above that WAIT's. */
const CONFIRM_OPTIONS = { ...OPTIONS, commandTimeoutMs: CONFIRM_WITHIN_MS + 1000 };

describe('WAIT after a write, on a master with one replica', () => {
  let master: TestRedis;
  let replica: TestRedis;
  let client: RedisClient;

  beforeAll(async () => {
    master = await startTestRedis();
    replica = await startTestRedis({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port), '--repl-diskless-sync-delay', '0'] });
    client = createRedisClient({ kind: 'single', url: master.url }, 'command', CONFIRM_OPTIONS, 'replica-ack-test');
    client.on('error', () => undefined);
    const probe = new Redis(master.url);
    await waitFor(async () => /state=online/.test(await probe.info('replication')), { message: 'the replica did not attach' });
    probe.disconnect();
  });
  afterAll(async () => {
    client?.disconnect();
    await replica?.destroy();
    await master?.destroy();
  });

  it('confirms a write its replica holds, and reports one it does not hold after the timeout', async () => {
    // A wide limit where the replica is to confirm (WAIT returns as soon as it does, within
    // milliseconds, but a loaded machine has held a replica's answer past 150 ms), a short one where
    // it cannot.
    expect(await new ReplicaAck({ replicas: 1, timeoutMs: CONFIRM_WITHIN_MS }).write(client, 'k1', () => client.set('k1', 'a'))).toBe('OK');
    const ack = new ReplicaAck({ replicas: 1, timeoutMs: 150 });

    process.kill(replica.pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const { value, shortfall, sentOn } = await ack.afterWrite(client, 'k2', () => client.incr('k2'));
      expect(value).toBe(1); // done on the master
      expect(shortfall).toBeInstanceOf(ReplicaAckError);
      expect(shortfall!.acknowledged).toBe(0);
      expect(shortfall!.message).toMatch(/0 of the 1 replica\(s\) required acknowledged the write within 150 ms/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      // The connection it went to can still be told from another one.
      expect(ack.sameConnection(client, 'k2', sentOn!)).toBe(true);
      await expect(ack.write(client, 'k3', () => client.set('k3', 'x'))).rejects.toBeInstanceOf(ReplicaAckError);
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    // More replicas than there are: never confirmed (the one there is confirms within the limit).
    const two = new ReplicaAck({ replicas: 2, timeoutMs: 1000 });
    const { shortfall } = await two.afterWrite(client, 'k4', () => client.set('k4', 'y'));
    expect(shortfall?.acknowledged).toBe(1);
    // Off: nothing waited for.
    expect((await new ReplicaAck({ replicas: 0, timeoutMs: 0 }).afterWrite(client, 'k5', () => client.set('k5', 'z'))).shortfall).toBeUndefined();
  });

  it('confirms a write queued while the connection was still being made (it goes out on that first connection)', async () => {
    const fresh = createRedisClient({ kind: 'single', url: master.url }, 'bullmq', CONFIRM_OPTIONS, 'fresh');
    fresh.on('error', () => undefined);
    try {
      expect(fresh.status).not.toBe('ready');
      const ack = new ReplicaAck({ replicas: 1, timeoutMs: CONFIRM_WITHIN_MS });
      expect(await ack.write(fresh, 'k7', () => fresh.set('k7', 'early'))).toBe('OK');
    } finally {
      fresh.disconnect();
    }
  });

  it('reports a reconnect between the write and WAIT as a shortfall, and binds the undo to the old connection', async () => {
    const ack = new ReplicaAck({ replicas: 1, timeoutMs: 500 });
    const admin = new Redis(master.url);
    try {
      const id = Number(await client.call('CLIENT', 'ID'));
      const { shortfall, sentOn } = await ack.afterWrite(client, 'k6', async () => {
        const value = await client.set('k6', 'v');
        await admin.call('CLIENT', 'KILL', 'ID', id);
        await waitFor(() => client.status !== 'ready', { timeoutMs: 5000, intervalMs: 5, message: 'the connection was not dropped' });
        return value;
      });
      expect(shortfall?.message).toMatch(/the connection changed while the write was in flight/);
      await waitFor(() => client.status === 'ready', { message: 'the connection did not come back' });
      // Back, but on another socket: an undo bound to the first one must not go there.
      expect(ack.sameConnection(client, 'k6', sentOn!)).toBe(false);
    } finally {
      admin.disconnect();
    }
  });
});

describe('WAIT on a Redis Cluster goes to the master of the key’s slot', () => {
  let cluster: TestRedisCluster;
  let client: RedisClient;

  beforeAll(async () => {
    cluster = await startTestRedisCluster({ masters: 3, replicas: 1 });
    client = createRedisClient(
      { kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
      'command',
      CONFIRM_OPTIONS,
      'ack-cluster',
    );
    client.on('error', () => undefined);
    await waitFor(() => client.status === 'ready' && (client as Cluster).slots.length > 0, { message: 'cluster client not ready' });
  });
  afterAll(async () => {
    client?.disconnect();
    await cluster?.destroy();
  });

  it('falls short for a key on the master whose replica is stopped, and confirms a key on another master', async () => {
    const ack = new ReplicaAck({ replicas: 1, timeoutMs: 200 });
    const confirming = new ReplicaAck({ replicas: 1, timeoutMs: CONFIRM_WITHIN_MS });
    const a = '{ack-a}:k';
    const masterA = await cluster.ownerOf(keySlot(a));
    let b = '';
    for (let n = 0; !b; n++) if ((await cluster.ownerOf(keySlot(`{ack-b${n}}:k`))) !== masterA) b = `{ack-b${n}}:k`;
    const [replicaA] = await cluster.replicasOf(masterA);
    // Both confirmed while every replica runs: WAIT found the write's connection each time.
    expect(await confirming.write(client, a, () => client.set(a, '1'))).toBe('OK');
    expect(await confirming.write(client, b, () => client.set(b, '1'))).toBe('OK');
    cluster.pause(replicaA!);
    try {
      const onA = await ack.afterWrite(client, a, () => client.set(a, '2'));
      expect(onA.shortfall?.acknowledged).toBe(0);
      // Sent to any other node, WAIT would have answered with that node's replica count (A's: 0).
      expect(await confirming.write(client, b, () => client.set(b, '2'))).toBe('OK');
    } finally {
      cluster.resume(replicaA!);
    }
  });
});

describe('a master demoted under a connection (READONLY)', () => {
  let x: TestRedis;
  let y: TestRedis;

  beforeAll(async () => {
    [x, y] = await Promise.all([startTestRedis(), startTestRedis()]);
  });
  afterAll(async () => {
    await Promise.all([x?.destroy(), y?.destroy()]);
  });

  it('reconnects and sends the refused write again; it lands once the server is a master again', async () => {
    const client = createRedisClient({ kind: 'single', url: x.url }, 'bullmq', OPTIONS, 'readonly-test') as Redis;
    client.on('error', () => undefined);
    const admin = new Redis(x.url);
    try {
      await waitFor(() => client.status === 'ready', { message: 'not connected' });
      let reconnects = 0;
      client.on('reconnecting', () => reconnects++);
      await admin.call('REPLICAOF', '127.0.0.1', String(y.port));
      const write = client.set('after-demotion', 'v');
      await waitFor(() => reconnects >= 1, { message: 'READONLY did not make the connection reconnect' });
      await admin.call('REPLICAOF', 'NO', 'ONE');
      expect(await write).toBe('OK');
      expect(await admin.get('after-demotion')).toBe('v');
    } finally {
      client.disconnect();
      admin.disconnect();
    }
  });
});
