/**
 * Provides Redis and PostgreSQL to a process: the configured servers, or the embedded default
 * (a private redis-server child and PGlite served on a local port, data under DATA_DIR).
 * Children stop with the platform; a second start reuses the data.
 */
import path from 'node:path';
import type { Config } from '../config/index.js';
import { startPglite } from '../db/pglite-server.js';
import type { Logger } from '../logging/logger.js';
import { lockDataDir } from './data-dir-lock.js';
import { redisServerAvailable, startRedisServer } from './redis-server-process.js';

export type RedisTarget = { kind: 'single'; url: string } | { kind: 'cluster'; nodes: { host: string; port: number }[] };

export interface ProvidedServices {
  redis: RedisTarget;
  database: { url: string; poolSize: number; embedded: boolean };
  /** Stops what this process started. Idempotent. */
  stop(): Promise<void>;
}

export function parseClusterNodes(spec: string): { host: string; port: number }[] {
  return spec.split(',').map((s) => {
    const [host, port] = s.trim().split(':');
    if (!host || !port || !Number.isInteger(Number(port))) throw new Error(`REDIS_CLUSTER_NODES: "${s}" is not host:port`);
    return { host, port: Number(port) };
  });
}

export function configuredRedis(config: Config): RedisTarget | undefined {
  if (config.redis.clusterNodes) return { kind: 'cluster', nodes: parseClusterNodes(config.redis.clusterNodes) };
  if (config.redis.url) return { kind: 'single', url: config.redis.url };
  return undefined;
}

export async function provideServices(
  config: Config,
  logger?: Logger,
  want: { redis?: boolean; database?: boolean } = { redis: true, database: true },
): Promise<ProvidedServices> {
  const stops: (() => Promise<void>)[] = [];
  const embeddedRedis = want.redis !== false && config.derived.embeddedRedis;
  const embeddedDb = want.database !== false && config.derived.embeddedDatabase;
  const lock = embeddedRedis || embeddedDb ? lockDataDir(config.derived.dataDir) : undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const s of stops.reverse()) await s().catch((err) => logger?.error({ err }, 'stopping an embedded service failed'));
      lock?.release();
    })());
  try {
    let redis = configuredRedis(config) ?? { kind: 'single' as const, url: '' };
    if (embeddedRedis) {
      if (!redisServerAvailable(config.redis.serverBin)) {
        throw new Error(
          `redis-server not found (${config.redis.serverBin}): install it (Debian/Ubuntu: apt-get install redis-server), ` +
            'or set REDIS_URL, or run `docker compose up -d redis postgres`',
        );
      }
      const server = await startRedisServer({ dir: path.join(config.derived.dataDir, 'redis'), bin: config.redis.serverBin });
      const onExit = () => process.kill(server.pid, 'SIGTERM');
      process.once('exit', onExit);
      stops.push(async () => {
        process.off('exit', onExit);
        await server.stop();
      });
      redis = { kind: 'single', url: server.url };
      logger?.info({ url: server.url, dir: path.join(config.derived.dataDir, 'redis') }, 'embedded redis-server started (AOF everysec)');
    }
    let database = { url: config.database.url ?? '', poolSize: config.database.poolSize, embedded: false };
    if (embeddedDb) {
      const dir = path.join(config.derived.dataDir, 'pglite');
      const server = await startPglite({ dataDir: dir });
      stops.push(() => server.stop());
      database = { url: server.url, poolSize: 1, embedded: true };
      logger?.info({ url: server.url, dir }, 'embedded PGlite started (one connection; set DATABASE_URL for several processes)');
    }
    return { redis, database, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
