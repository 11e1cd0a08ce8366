/**
 * A real 3-master Redis Cluster on loopback for one test file: three `redis-server
 * --cluster-enabled yes` children (AOF on, each in its own directory), joined by
 * `redis-cli --cluster create ... --cluster-replicas 0 --cluster-yes`, ready once every node
 * reports `cluster_state:ok`, knows all masters and sees every slot assigned. Stopped by pid,
 * directories removed.
 *
 * With `replicas: 1` each master gets a replica (`--cluster-replicas 1`; by hand, CLUSTER
 * REPLICATE), ready once each holds everything its master has. A killed master is replaced by its
 * replica after about cluster-node-timeout (`nodeTimeoutMs`, short in failover tests); restarted
 * (same port and directory, so the same node id in nodes.conf) it rejoins as the replica of the
 * node that took its slots. Nodes are addressed by their port, which they keep.
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
import { keySlot } from '../../src/queues/partitions.js';
import { freePort } from '../../src/services/free-port.js';
import { startRedisServer, type RedisServerProcess } from '../../src/services/redis-server-process.js';

const run = promisify(execFile);

export interface TestRedisCluster {
  /** The masters as started. */
  nodes: (RedisServerProcess & { busPort: number })[];
  /** The replicas as started (none unless `replicas` was given). */
  replicaNodes: (RedisServerProcess & { busPort: number })[];
  /** REDIS_CLUSTER_NODES value: host:port of every master as started. */
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
  /** SIGKILL a node: a crash, nothing flushed. */
  kill(port: number): Promise<void>;
  /** SIGSTOP / SIGCONT a node: a node that stops answering for a while (its replication lags). */
  pause(port: number): void;
  resume(port: number): void;
  /** Closes the replication links of the node on `port` (CLIENT KILL TYPE replica). */
  cutReplication(port: number): Promise<void>;
  /** Starts a killed node again, same port, directory and node id. */
  restart(port: number): Promise<void>;
  /** Ports of the running nodes that replicate the master on `port`. */
  replicasOf(port: number): Promise<number[]>;
  /**
   * Resolves with the new owner of `slot` once every node that answers names a master other than
   * `oldPort` for it and reports cluster_state:ok.
   */
  waitForFailover(slot: number, oldPort: number, timeoutMs?: number): Promise<number>;
  /** Resolves once the master of `slot` has `count` replicas that hold everything it has. */
  waitForReplicas(slot: number, count: number, timeoutMs?: number): Promise<void>;
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

const probeKeys = new Map<number, string>();
/** A key (outside the platform's prefix) that hashes to `slot`. */
function probeKey(slot: number): string {
  let key = probeKeys.get(slot);
  for (let n = 0; !key; n++) if (keySlot(`sync-probe-${n}`) === slot) key = `wp-test:{sync-probe-${n}}`;
  probeKeys.set(slot, key);
  return key;
}

/** A node's view of the cluster: its own role and, for a replica, its master's port. */
async function roleOf(port: number): Promise<{ role: string; masterPort?: number }> {
  const text = (await onNode(port, (c) => c.call('INFO', 'replication'))) as string;
  const role = /^role:(\w+)/m.exec(text)?.[1] ?? '';
  const master = /^master_port:(\d+)/m.exec(text)?.[1];
  return { role, ...(master ? { masterPort: Number(master) } : {}) };
}

export async function startTestRedisCluster(options: { masters?: number; replicas?: number; nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const total = masters * (1 + replicas);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-test-redis-cluster-'));
  const nodes: TestRedisCluster['nodes'] = [];
  const replicaNodes: TestRedisCluster['replicaNodes'] = [];
  /** The running process of each port (a restart replaces it). */
  const running = new Map<number, RedisServerProcess>();
  let destroying: Promise<void> | undefined;
  const destroy = () =>
    (destroying ??= (async () => {
      await Promise.all(
        [...running.values()].map(async (n) => {
          try {
            process.kill(n.pid, 'SIGCONT'); // a node left paused would never stop
          } catch {
            // gone already
          }
          await n.stop();
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    })());
  const withBusPortOption = redisMajorVersion() >= 7;
  const nodeDirs = new Map<number, { dir: string; busPort: number }>();
  const startNode = async (port: number) => {
    const { dir: nodeDir, busPort } = nodeDirs.get(port)!;
    const server = await startRedisServer({
      dir: nodeDir,
      port,
      extraArgs: [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(options.nodeTimeoutMs ?? 5000),
        // A replica's full sync starts at once (the default waits 5 s for more replicas to share it).
        '--repl-diskless-sync-delay',
        '0',
        ...(withBusPortOption ? ['--cluster-port', String(busPort)] : []),
      ],
    });
    running.set(port, server);
    return { ...server, busPort };
  };
  try {
    for (const [i, { port, busPort }] of (await nodePorts(total, withBusPortOption)).entries()) {
      nodeDirs.set(port, { dir: path.join(dir, `node-${i}`), busPort });
      const node = await startNode(port);
      (i < masters ? nodes : replicaNodes).push(node);
    }
    const seeds = nodes.map((n) => `127.0.0.1:${n.port}`);
    if (hasRedisCli()) {
      // redis-cli makes the first `masters` nodes listed the masters (one host: no interleaving).
      const all = [...nodes, ...replicaNodes].map((n) => `127.0.0.1:${n.port}`);
      await run('redis-cli', ['--cluster', 'create', ...all, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
    } else {
      // What redis-cli does: an even share of the slots to each master, then every node meets the first.
      for (const [i, node] of nodes.entries()) {
        const [from, to] = [Math.floor((i * SLOTS) / masters), Math.floor(((i + 1) * SLOTS) / masters) - 1];
        await onNode(node.port, (c) => c.call('CLUSTER', 'ADDSLOTS', ...Array.from({ length: to - from + 1 }, (_, k) => from + k)));
      }
      for (const node of [...nodes.slice(1), ...replicaNodes])
        await onNode(node.port, (c) => c.call('CLUSTER', 'MEET', '127.0.0.1', nodes[0]!.port, nodes[0]!.busPort));
    }
    const allPorts = [...nodes, ...replicaNodes].map((n) => n.port);
    for (let i = 0; ; i++) {
      const infos = await Promise.all(allPorts.map((p) => clusterInfo(p).catch(() => ({}) as Record<string, string>)));
      if (infos.every((info) => info.cluster_state === 'ok' && info.cluster_known_nodes === String(total) && info.cluster_slots_assigned === String(SLOTS)))
        break;
      if (i >= 600) throw new Error(`Redis Cluster not ok after 30 s: ${JSON.stringify(infos)}`);
      await sleep(50);
    }
    const masterIds = new Map(await Promise.all(nodes.map(async (n) => [n.port, (await onNode(n.port, (c) => c.call('CLUSTER', 'MYID'))) as string] as const)));
    if (!hasRedisCli()) {
      // Each master's share of the replicas, in order.
      for (const [i, replica] of replicaNodes.entries()) {
        await onNode(replica.port, (c) => c.call('CLUSTER', 'REPLICATE', masterIds.get(nodes[i % masters]!.port)!));
      }
    }
    const clientPorts = nodes.map((n) => n.port);
    /** A port of a node that answers (the first master may be the one killed). */
    const anyLive = async (): Promise<number> => {
      for (const port of running.keys())
        if (
          await clusterInfo(port).then(
            () => true,
            () => false,
          )
        )
          return port;
      throw new Error('no cluster node answers');
    };
    /** Whether the master of `slot` has `count` replicas holding all it has: a write in the slot, then WAIT on the same connection. */
    const replicasInSync = async (slot: number, count: number) => {
      const master = await ownerPort(await anyLive(), slot);
      return onNode(master, async (c) => {
        await c.set(probeKey(slot), String(Date.now()));
        return Number(await c.call('WAIT', count, 500)) >= count;
      });
    };
    await Promise.all(
      nodes.map(async (_, i) => {
        const slot = Math.floor((i * SLOTS) / masters);
        for (let k = 0; replicas > 0; k++) {
          if (await replicasInSync(slot, replicas).catch(() => false)) return;
          if (k >= 600) throw new Error(`the master of slot ${slot} did not get ${replicas} replica(s) in sync`);
          await sleep(50);
        }
      }),
    );
    return {
      nodes,
      replicaNodes,
      seeds: seeds.join(','),
      dir,
      ownerOf: async (slot) => ownerPort(replicas ? await anyLive() : clientPorts[0]!, slot),
      moveSlot: (slot, toPort, moveOptions) => moveSlot(clientPorts, slot, toPort, moveOptions?.keysPerMigrate),
      keysInSlot: async (slot) => Number(await onNode(await ownerPort(clientPorts[0]!, slot), (c) => c.call('CLUSTER', 'COUNTKEYSINSLOT', slot))),
      errorStats: async () => new Map(await Promise.all(clientPorts.map(async (p) => [p, await errorStats(p)] as const))),
      kill: async (port) => {
        await running.get(port)!.kill();
      },
      pause: (port) => process.kill(running.get(port)!.pid, 'SIGSTOP'),
      resume: (port) => process.kill(running.get(port)!.pid, 'SIGCONT'),
      cutReplication: async (port) => {
        await onNode(port, (c) => c.call('CLIENT', 'KILL', 'TYPE', 'replica'));
      },
      restart: async (port) => {
        await startNode(port);
      },
      replicasOf: async (port) => {
        const roles = await Promise.all([...running.keys()].map(async (p) => ({ p, ...(await roleOf(p).catch(() => ({ role: '' }))) })));
        return roles.filter((r) => r.role === 'slave' && 'masterPort' in r && r.masterPort === port).map((r) => r.p);
      },
      waitForFailover: async (slot, oldPort, timeoutMs = 30_000) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const views = await Promise.all(
            [...running.keys()]
              .filter((p) => p !== oldPort)
              .map(async (p) => {
                const [info, owner] = await Promise.all([clusterInfo(p), ownerPort(p, slot)]);
                return { ok: info.cluster_state === 'ok', owner };
              }),
          ).catch(() => undefined);
          const owner = views?.[0]?.owner;
          if (views && owner !== undefined && owner !== oldPort && views.every((v) => v.ok && v.owner === owner) && (await roleOf(owner)).role === 'master')
            return owner;
          if (Date.now() > deadline) throw new Error(`slot ${slot}: no replica took over from ${oldPort} within ${timeoutMs} ms: ${JSON.stringify(views)}`);
          await sleep(50);
        }
      },
      waitForReplicas: async (slot, count, timeoutMs = 60_000) => {
        const deadline = Date.now() + timeoutMs;
        while (!(await replicasInSync(slot, count).catch(() => false))) {
          if (Date.now() > deadline) throw new Error(`the master of slot ${slot} did not get ${count} replica(s) in sync`);
          await sleep(100);
        }
      },
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}
