/**
 * The platform on Redis Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_PASSWORD,
 * REDIS_SENTINEL_PASSWORD): one master, one replica and three sentinels on loopback, every role
 * but the browser crawler in one process (a stand-in crawler runs the crawl chains), the master
 * killed (SIGKILL) mid-work after its replica lagged for a moment (failover-run.ts).
 *
 * Without REDIS_REPLICA_ACKS the platform comes back by itself: the promoted replica is found
 * through the sentinels, the workers (their blocking connections included) go on, no job dies and
 * every chain is whole; what the failover lost of what was acknowledged (the writes the replica
 * had not received) is printed. With REDIS_REPLICA_ACKS=1 nothing acknowledged is lost: every
 * message answered 201 is read back and stored, no pool row is served twice.
 *
 * Neither password appears in any log line. A manual failover (the old master demoted while
 * alive) moves every kind of connection to the new master by itself as well.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createRedisClient } from '../../src/redis/connection.js';
import { configuredRedis } from '../../src/redis/redis-target.js';
import { ROLE_NAMES } from '../../src/runtime/roles.js';
import { startTestRedisSentinel, type TestRedisSentinel } from '../support/redis-sentinel.js';
import { waitFor } from '../support/wait.js';
import { describeReport, runFailover, WORK_ENV, type FailoverTopology } from './failover-run.js';
import { startHaPlatform, type HaPlatform } from './support.js';

const roles = ROLE_NAMES.filter((r) => r !== 'crawler');

describe('the platform on Redis Sentinel: the master killed mid-work', () => {
  let sentinel: TestRedisSentinel;
  let t: HaPlatform | undefined;

  beforeAll(async () => {
    sentinel = await startTestRedisSentinel({ replicas: 1, downAfterMs: 1000, failoverTimeoutMs: 4000 });
  });
  afterAll(async () => {
    await t?.stop();
    await sentinel?.destroy();
  });

  const topology = (): FailoverTopology => ({
    victim: async () => {
      const master = await sentinel.masterPort();
      return { master, replica: sentinel.dataPorts.find((p) => p !== master)! };
    },
    kill: (port) => sentinel.kill(port),
    pause: (port) => sentinel.pause(port),
    resume: (port) => sentinel.resume(port),
    cutReplication: (port) => sentinel.cutReplication(port),
    promoted: (old) => sentinel.waitForFailover(old),
    rejoin: async (old) => {
      await sentinel.restart(old);
      await sentinel.waitForReplicas(1);
    },
  });

  const start = async (prefix: string, env: Record<string, string>) => {
    t = await startHaPlatform(sentinel.env, [...roles], { ...WORK_ENV, REDIS_PREFIX: prefix, ...env });
    return t;
  };
  const stop = async () => {
    await t?.stop();
    t = undefined;
  };
  const noSecretsLogged = (lines: string[]) => {
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(text).not.toContain(sentinel.password);
    expect(text).not.toContain(sentinel.sentinelPassword);
  };

  it('without REDIS_REPLICA_ACKS: every role resumes by itself, no job dies, the chains stay whole; the acknowledged writes the replica had not received are lost', async () => {
    const p = await start('wpa', { REDIS_REPLICA_ACKS: '0' });
    // Connected through the sentinels to the master they name.
    expect(p.platform.ctx.connections.target).toMatchObject({ kind: 'sentinel', name: sentinel.name, password: sentinel.password });
    expect(JSON.stringify((await p.api.withToken(undefined).get('/readyz')).body)).toContain('"redis":"up"');
    const report = await runFailover(p, topology(), 'sentinel, no wait');
    console.info(describeReport(report));
    expect(report.unexpected).toEqual([]);
    expect(report.deadJobs).toBe(0);
    expect(report.brokenChains).toEqual([]);
    // Pops answered while the replica lagged never reached it: the promoted replica still has
    // their rows in the pool and serves them again. (Messages answered then are lost when no drain
    // took them to the DB first; printed above.)
    expect(report.popsDuringLag).toBeGreaterThan(0);
    expect(report.rowsServedTwice).toBeGreaterThan(0);
    noSecretsLogged(p.lines);
    await stop();
  }, 240_000);

  it('with REDIS_REPLICA_ACKS=1: every acknowledged message is read back and stored, no pool row is served twice, the chains stay whole', async () => {
    const p = await start('wpb', { REDIS_REPLICA_ACKS: '1', REDIS_REPLICA_ACK_TIMEOUT_MS: '200' });
    const report = await runFailover(p, topology(), 'sentinel, REDIS_REPLICA_ACKS=1');
    console.info(describeReport(report));
    expect(report.unexpected).toEqual([]);
    expect(report.messagesUnreadable).toBe(0);
    expect(report.messagesUnstored).toBe(0);
    expect(report.rowsServedTwice).toBe(0);
    expect(report.brokenChains).toEqual([]);
    expect(report.deadJobs).toBe(0);
    noSecretsLogged(p.lines);
    await stop();
  }, 240_000);

  it('a manual failover (SENTINEL FAILOVER, the old master demoted alive): every kind of connection goes on to the new master by itself', async () => {
    const target = configuredRedis(loadConfig(sentinel.env))!;
    const options = { connectTimeoutMs: 1000, commandTimeoutMs: 1000 };
    const clients = (['bullmq', 'producer', 'command', 'once'] as const).map((kind) => {
      const client = createRedisClient(target, kind, options, `manual-${kind}`) as Redis;
      client.on('error', () => undefined);
      return { kind, client };
    });
    try {
      const port = async (client: Redis) => Number(/^tcp_port:(\d+)/m.exec(await client.info('server'))?.[1]);
      const old = await sentinel.masterPort();
      await waitFor(async () => (await Promise.all(clients.map(async ({ client }) => (await port(client).catch(() => 0)) === old))).every(Boolean), {
        message: 'not every connection reached the master',
      });
      // The queue connection keeps writing throughout: its writes wait for the new master.
      let writing = true;
      let written = 0;
      const queue = clients[0]!.client;
      const writer = (async () => {
        while (writing) {
          await queue.incr('wp-test:manual-failover');
          written++;
        }
      })();
      await sentinel.failover();
      const promoted = await sentinel.waitForFailover(old);
      const atPromotion = written;
      // Each connection writes on the promoted master again, without a restart (a request-path
      // connection may fail a command or two while it switches: it has no offline queue).
      await waitFor(
        async () =>
          (
            await Promise.all(
              clients.map(async ({ client }) => {
                if ((await port(client).catch(() => 0)) !== promoted) return false;
                await client.set(`wp-test:manual-failover:${client.options.connectionName}`, 'x');
                return true;
              }),
            ).catch(() => [false])
          ).every(Boolean),
        { timeoutMs: 30_000, message: 'not every connection went on to the promoted master' },
      );
      await waitFor(() => written >= atPromotion + 50, { message: 'the queue connection did not go on writing' });
      writing = false;
      await writer;
    } finally {
      for (const { client } of clients) client.disconnect();
    }
  }, 120_000);
});
