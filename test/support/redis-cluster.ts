/**
 * A real 3-master Redis Cluster on loopback for one test file: three `redis-server
 * --cluster-enabled yes` children (AOF on, each in its own directory), joined by
 * `redis-cli --cluster create ... --cluster-replicas 0 --cluster-yes`, ready once every node
 * reports `cluster_state:ok`, knows all masters and sees every slot assigned. Stopped by pid,
 * directories removed.
 *
 * Ports: the cluster bus port of a node is its client port + 10000 unless given. Redis >= 7 takes
 * it with `--cluster-port`, so both are simply chosen free; an older Redis gets a client port whose
 * +10000 neighbour is free. Without redis-cli (a Redis built without redis-tools) the same cluster
 * is joined by hand: CLUSTER ADDSLOTS on each node, then CLUSTER MEET.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../../src/services/free-port.js';
import { startRedisServer, type RedisServerProcess } from '../../src/services/redis-server-process.js';

const run = promisify(execFile);

export interface TestRedisCluster {
  nodes: (RedisServerProcess & { busPort: number })[];
  /** REDIS_CLUSTER_NODES value: host:port of every master. */
  seeds: string;
  dir: string;
  /** The client port of the master serving `slot` (as that node sees it). */
  ownerOf(slot: number): Promise<number>;
  /**
   * Moves one slot with its keys to the master on `toPort`, the way redis-cli --cluster reshard
   * does (IMPORTING/MIGRATING, MIGRATE in batches, SETSLOT NODE on every master): clients meet
   * ASK redirections while it moves and MOVED afterwards. Resolves once every node agrees.
   * `keysPerMigrate` (default 100): keys per MIGRATE (redis-cli's --cluster-pipeline, 10 by
   * default there); fewer keep the slot half-moved longer.
   */
  moveSlot(slot: number, toPort: number, options?: { keysPerMigrate?: number }): Promise<void>;
  /** Keys in a slot, as its owner counts them. */
  keysInSlot(slot: number): Promise<number>;
  /**
   * Error replies each node has given since it started, by kind (INFO errorstats: MOVED, ASK,
   * TRYAGAIN, ...), keyed by the node's client port.
   */
  errorStats(): Promise<Map<number, Record<string, number>>>;
  /** Stops every node and removes the data. Idempotent. */
  destroy(): Promise<void>;
}

const SLOTS = 16384;

function redisMajorVersion(): number {
  const out = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return Number(/v=(\d+)\./.exec(out)?.[1] ?? 0);
}

function hasRedisCli(): boolean {
  return spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status === 0;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Client and bus port of each node, all distinct and free a moment ago. */
async function nodePorts(count: number, busPortOption: boolean): Promise<{ port: number; busPort: number }[]> {
  const taken = new Set<number>();
  const out: { port: number; busPort: number }[] = [];
  while (out.length < count) {
    const port = await freePort();
    if (taken.has(port)) continue;
    let busPort: number;
    if (busPortOption) {
      busPort = await freePort();
      if (busPort === port || taken.has(busPort)) continue;
    } else {
      busPort = port + 10_000;
      if (busPort > 65_535 || taken.has(busPort) || !(await portIsFree(busPort))) continue;
    }
    taken.add(port).add(busPort);
    out.push({ port, busPort });
  }
  return out;
}

/** Runs `fn` on a plain (non-cluster) connection to one node. */
async function onNode<T>(port: number, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

async function clusterInfo(port: number): Promise<Record<string, string>> {
  const text = (await onNode(port, (c) => c.call('CLUSTER', 'INFO'))) as string;
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => l.split(':') as [string, string]),
  );
}

/** CLUSTER SLOTS as seen by one node: [start, end, [host, port, id], ...replicas]. */
async function ownerPort(port: number, slot: number): Promise<number> {
  const ranges = (await onNode(port, (c) => c.call('CLUSTER', 'SLOTS'))) as [number, number, [string, number, string]][];
  const range = ranges.find(([start, end]) => slot >= start && slot <= end);
  if (!range) throw new Error(`slot ${slot} is not served (node ${port})`);
  return range[2][1];
}

async function errorStats(port: number): Promise<Record<string, number>> {
  const text = (await onNode(port, (c) => c.call('INFO', 'errorstats'))) as string;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^errorstat_([^:]+):count=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

async function moveSlot(ports: number[], slot: number, toPort: number, keysPerMigrate = 100): Promise<void> {
  const fromPort = await ownerPort(ports[0]!, slot);
  if (fromPort === toPort) return;
  const id = (port: number) => onNode(port, (c) => c.call('CLUSTER', 'MYID')) as Promise<string>;
  const [fromId, toId] = [await id(fromPort), await id(toPort)];
  await onNode(toPort, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId));
  await onNode(fromPort, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId));
  await onNode(fromPort, async (c) => {
    for (;;) {
      const keys = (await c.call('CLUSTER', 'GETKEYSINSLOT', slot, keysPerMigrate)) as string[];
      if (!keys.length) return;
      await c.call('MIGRATE', '127.0.0.1', toPort, '', 0, 10_000, 'KEYS', ...keys);
    }
  });
  // The new owner first, then the old one (its clients are sent on by MOVED), then the rest.
  for (const port of [toPort, fromPort, ...ports.filter((p) => p !== toPort && p !== fromPort)]) {
    await onNode(port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId));
  }
  for (let i = 0; ; i++) {
    const owners = await Promise.all(ports.map((p) => ownerPort(p, slot)));
    if (owners.every((o) => o === toPort)) return;
    if (i >= 200) throw new Error(`slot ${slot}: nodes disagree on its owner after the move: ${owners.join(', ')}`);
    await sleep(50);
  }
}

export async function startTestRedisCluster(options: { masters?: number; nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
  const masters = options.masters ?? 3;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-test-redis-cluster-'));
  const nodes: TestRedisCluster['nodes'] = [];
  let destroying: Promise<void> | undefined;
  const destroy = () =>
    (destroying ??= (async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    const withBusPortOption = redisMajorVersion() >= 7;
    for (const [i, { port, busPort }] of (await nodePorts(masters, withBusPortOption)).entries()) {
      const server = await startRedisServer({
        dir: path.join(dir, `node-${i}`),
        port,
        extraArgs: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 5000),
          ...(withBusPortOption ? ['--cluster-port', String(busPort)] : []),
        ],
      });
      nodes.push({ ...server, busPort });
    }
    const seeds = nodes.map((n) => `127.0.0.1:${n.port}`);
    if (hasRedisCli()) {
      await run('redis-cli', ['--cluster', 'create', ...seeds, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 });
    } else {
      // What redis-cli does: an even share of the slots to each master, then every node meets the first.
      for (const [i, node] of nodes.entries()) {
        const [from, to] = [Math.floor((i * SLOTS) / masters), Math.floor(((i + 1) * SLOTS) / masters) - 1];
        await onNode(node.port, (c) => c.call('CLUSTER', 'ADDSLOTS', ...Array.from({ length: to - from + 1 }, (_, k) => from + k)));
      }
      for (const node of nodes.slice(1)) await onNode(node.port, (c) => c.call('CLUSTER', 'MEET', '127.0.0.1', nodes[0]!.port, nodes[0]!.busPort));
    }
    for (let i = 0; ; i++) {
      const infos = await Promise.all(nodes.map((n) => clusterInfo(n.port).catch(() => ({}) as Record<string, string>)));
      if (infos.every((info) => info.cluster_state === 'ok' && info.cluster_known_nodes === String(masters) && info.cluster_slots_assigned === String(SLOTS)))
        break;
      if (i >= 600) throw new Error(`Redis Cluster not ok after 30 s: ${JSON.stringify(infos)}`);
      await sleep(50);
    }
    const clientPorts = nodes.map((n) => n.port);
    return {
      nodes,
      seeds: seeds.join(','),
      dir,
      ownerOf: (slot) => ownerPort(clientPorts[0]!, slot),
      moveSlot: (slot, toPort, moveOptions) => moveSlot(clientPorts, slot, toPort, moveOptions?.keysPerMigrate),
      keysInSlot: async (slot) => Number(await onNode(await ownerPort(clientPorts[0]!, slot), (c) => c.call('CLUSTER', 'COUNTKEYSINSLOT', slot))),
      errorStats: async () => new Map(await Promise.all(clientPorts.map(async (p) => [p, await errorStats(p)] as const))),
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}
