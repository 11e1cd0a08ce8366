/**
 * A real Redis Sentinel set-up on loopback for one test file: one master and `replicas` replicas
 * (redis-server children, AOF on, requirepass + masterauth from a 0600 config file), and three
 * sentinels (`redis-server sentinel.conf --sentinel`, their own requirepass) monitoring the master
 * as group `name` with quorum 2, a short down-after-milliseconds and failover-timeout so that a
 * killed master is replaced within seconds. Ready once every replica is in sync and every
 * sentinel knows the replicas and the two other sentinels (a sentinel learns replicas from the
 * master's INFO, every 10 s, so the sentinels start after the replicas are attached). Everything
 * binds 127.0.0.1 and is stopped by pid; the directory is removed.
 *
 * The data nodes are addressed by their port, which a node keeps across kill and restart: after a
 * failover the restarted old master comes back as a master with its stale data until a sentinel
 * turns it into a replica of the new one (`waitForReplicas`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { exited } from '../../src/services/child-process.js';
import { freePort } from '../../src/services/free-port.js';
import { pingRedis, startRedisServer, type RedisServerProcess } from '../../src/services/redis-server-process.js';
import { waitFor } from './wait.js';

export interface SentinelOptions {
  /** Replicas of the master (default 1). */
  replicas?: number;
  /** sentinel down-after-milliseconds (default 1000). */
  downAfterMs?: number;
  /** sentinel failover-timeout (default 4000). */
  failoverTimeoutMs?: number;
}

export interface TestRedisSentinel {
  /** The master group name (REDIS_SENTINEL_NAME). */
  name: string;
  /** The data nodes' password (REDIS_PASSWORD). */
  password: string;
  /** The sentinels' own password (REDIS_SENTINEL_PASSWORD). */
  sentinelPassword: string;
  /** REDIS_SENTINELS: host:port of the three sentinels. */
  sentinels: string;
  /** The environment that points the platform at this set-up. */
  env: Record<string, string>;
  /** Ports of the data nodes (master first at start). */
  dataPorts: number[];
  /** The master's port as a majority of the sentinels report it. */
  masterPort(): Promise<number>;
  /** A plain connection to one data node (the caller disconnects it). */
  node(port: number): Redis;
  /** SIGKILL a data node: a crash, nothing flushed. */
  kill(port: number): Promise<void>;
  /** SIGSTOP / SIGCONT a data node: a node that stops answering for a while (replication lags). */
  pause(port: number): void;
  resume(port: number): void;
  /**
   * Closes the replication links of the data node on `port` (CLIENT KILL TYPE replica): until a
   * replica reconnects (about a second later, unless it is paused), nothing the node writes reaches it.
   */
  cutReplication(port: number): Promise<void>;
  /**
   * Starts a killed data node again (same port, data directory and password), as a replica of the
   * master the sentinels name now: what an operator or an orchestrator does with a failed master.
   * (Started as a master, it would wait for a sentinel to convert it, which takes 10-20 s.)
   */
  restart(port: number): Promise<void>;
  /** Asks a sentinel for a failover now (SENTINEL FAILOVER): a replica is promoted and the master, alive, demoted. */
  failover(): Promise<void>;
  /** Resolves with the new master once every sentinel names a master other than `oldPort` and that node says it is one. */
  waitForFailover(oldPort: number, timeoutMs?: number): Promise<number>;
  /** Resolves once the current master has `count` replicas online and caught up with it. */
  waitForReplicas(count: number, timeoutMs?: number): Promise<void>;
  /** Stops every process and removes the data. Idempotent. */
  destroy(): Promise<void>;
}

const QUORUM = 2;
const SENTINELS = 3;

function info(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':') && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
  );
}

async function once<T>(port: number, password: string, fn: (c: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

export async function startTestRedisSentinel(options: SentinelOptions = {}): Promise<TestRedisSentinel> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-test-redis-sentinel-'));
  const name = 'wp-master';
  const password = randomBytes(18).toString('base64url');
  const sentinelPassword = randomBytes(18).toString('base64url');
  const data = new Map<number, RedisServerProcess>();
  const sentinelProcs: { port: number; child: ChildProcess }[] = [];
  let destroying: Promise<void> | undefined;
  const destroy = () =>
    (destroying ??= (async () => {
      await Promise.all(
        sentinelProcs.map(async ({ child }) => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited(child);
          clearTimeout(timer);
        }),
      );
      await Promise.all(
        [...data.values()].map(async (n) => {
          // A node left paused would never stop.
          try {
            process.kill(n.pid, 'SIGCONT');
          } catch {
            // gone already
          }
          await n.stop();
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    })());

  // A restarted node must find its own directory: nodes are created with a known port.
  const nodeDir = (port: number) => path.join(dir, `node-${port}`);
  const startDataNode = async (port: number, replicaOf?: number) => {
    mkdirSync(nodeDir(port), { recursive: true });
    const server = await startRedisServer({
      dir: nodeDir(port),
      password,
      port,
      // A full sync starts at once (the default waits 5 s for more replicas to share it).
      extraArgs: ['--repl-diskless-sync-delay', '0', ...(replicaOf ? ['--replicaof', '127.0.0.1', String(replicaOf)] : [])],
    });
    data.set(port, server);
    return server;
  };

  try {
    const masterPort = await freePort();
    await startDataNode(masterPort);
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      let port = await freePort();
      while (data.has(port)) port = await freePort();
      await startDataNode(port, masterPort);
    }
    const dataPorts = [...data.keys()];
    // A master with `count` replicas that hold everything it has: a write (a key outside the
    // platform's prefix) followed by WAIT on the same connection, as the platform does it.
    const inSync = (master: number, count: number) =>
      once(master, password, async (c) => {
        if (info(await c.info('replication')).role !== 'master') return false;
        await c.set('wp-test:sync-probe', String(Date.now()));
        return Number(await c.call('WAIT', count, 500)) >= count;
      });
    await waitFor(() => inSync(masterPort, dataPorts.length - 1), { timeoutMs: 30_000, intervalMs: 50, message: 'replicas not in sync' });

    for (let i = 0; i < SENTINELS; i++) {
      let port = await freePort();
      while (data.has(port) || sentinelProcs.some((s) => s.port === port)) port = await freePort();
      const sdir = path.join(dir, `sentinel-${port}`);
      mkdirSync(sdir, { recursive: true });
      const conf = path.join(sdir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          'daemonize no',
          `dir ${sdir}`,
          `logfile ${path.join(sdir, 'sentinel.log')}`,
          `requirepass ${sentinelPassword}`,
          `sentinel sentinel-pass ${sentinelPassword}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} ${QUORUM}`,
          `sentinel auth-pass ${name} ${password}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 4000}`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
      child.once('error', () => undefined);
      sentinelProcs.push({ port, child });
      await waitFor(() => pingRedis(port, sentinelPassword), { timeoutMs: 10_000, intervalMs: 25, message: `sentinel on ${port} did not answer` });
    }
    const onSentinels = <T>(fn: (c: Redis) => Promise<T>) => Promise.all(sentinelProcs.map((s) => once(s.port, sentinelPassword, fn).catch(() => undefined)));
    await waitFor(
      async () => {
        const views = await onSentinels(async (c) => ({
          replicas: ((await c.call('SENTINEL', 'REPLICAS', name)) as string[][]).filter((r) => !/s_down|disconnected/.test(r[r.indexOf('flags') + 1] ?? ''))
            .length,
          sentinels: ((await c.call('SENTINEL', 'SENTINELS', name)) as unknown[]).length,
        }));
        return views.every((v) => v && v.replicas === dataPorts.length - 1 && v.sentinels === SENTINELS - 1);
      },
      { timeoutMs: 30_000, intervalMs: 100, message: 'the sentinels did not discover the replicas and each other' },
    );

    const reportedMaster = async () => {
      const ports = (await onSentinels(async (c) => Number(((await c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]))).filter(
        (p): p is number => p !== undefined,
      );
      return ports;
    };
    const sentinels = sentinelProcs.map((s) => `127.0.0.1:${s.port}`).join(',');
    const signal = (port: number, sig: NodeJS.Signals) => {
      const node = data.get(port);
      if (!node) throw new Error(`no data node on ${port}`);
      process.kill(node.pid, sig);
    };
    return {
      name,
      password,
      sentinelPassword,
      sentinels,
      env: { REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: name, REDIS_PASSWORD: password, REDIS_SENTINEL_PASSWORD: sentinelPassword },
      dataPorts,
      masterPort: async () => {
        const ports = await reportedMaster();
        const counts = new Map<number, number>();
        for (const p of ports) counts.set(p, (counts.get(p) ?? 0) + 1);
        const [port, n] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [0, 0];
        if (n < QUORUM) throw new Error(`the sentinels disagree on the master: ${ports.join(', ')}`);
        return port;
      },
      node: (port) => new Redis({ host: '127.0.0.1', port, password, maxRetriesPerRequest: 1 }),
      kill: async (port) => {
        await data.get(port)!.kill();
      },
      pause: (port) => signal(port, 'SIGSTOP'),
      cutReplication: async (port) => {
        await once(port, password, (c) => c.call('CLIENT', 'KILL', 'TYPE', 'replica'));
      },
      resume: (port) => signal(port, 'SIGCONT'),
      restart: async (port) => {
        const [master] = await reportedMaster();
        if (master === undefined || master === port) throw new Error(`no other master to restart ${port} as a replica of`);
        await startDataNode(port, master);
      },
      failover: async () => {
        await once(sentinelProcs[0]!.port, sentinelPassword, (c) => c.call('SENTINEL', 'FAILOVER', name));
      },
      waitForFailover: async (oldPort, timeoutMs = 30_000) =>
        waitFor(
          async () => {
            const ports = await reportedMaster();
            const [first] = ports;
            if (ports.length !== SENTINELS || first === oldPort || ports.some((p) => p !== first)) return undefined;
            const role = info(await once(first!, password, (c) => c.info('replication'))).role;
            return role === 'master' ? first : undefined;
          },
          { timeoutMs, intervalMs: 50, message: 'the sentinels did not promote a replica' },
        ),
      waitForReplicas: async (count, timeoutMs = 60_000) => {
        await waitFor(async () => inSync(await reportedMaster().then((p) => p[0]!), count), {
          timeoutMs,
          intervalMs: 100,
          message: `the master did not get ${count} replica(s) in sync`,
        });
      },
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}
