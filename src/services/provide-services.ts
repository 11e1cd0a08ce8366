/**
 * Provides Redis and PostgreSQL to a process: the configured servers (REDIS_URL /
 * REDIS_SENTINELS / REDIS_CLUSTER_NODES, DATABASE_URL), or the embedded default under DATA_DIR.
 *
 * Embedded default, per data directory:
 * - owner: the first process takes the DATA_DIR lock and starts a private redis-server and
 *   PostgreSQL server as children, each in its own process group (a Ctrl-C or a signal to the
 *   platform's group reaches the platform, which stops its roles first and its services last).
 *   Both listen on 127.0.0.1 only, require the generated passwords kept in `services.json`
 *   (0600), and reuse their ports across restarts when free. The owner records itself there;
 *   its stop stops the services and clears the record.
 * - attached: a process that finds the lock held by a live process waits until that owner's
 *   services answer and uses them; it starts and stops nothing. When the owner stops, the
 *   attached process's connections report the outage and come back by themselves once the
 *   owner (same ports, same passwords) runs again.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import { configuredRedis, type RedisTarget } from '../redis/redis-target.js';
import { lockDataDir } from './data-dir-lock.js';
import { isPortFree } from './free-port.js';
import { startPostgresServer } from './postgres-server-process.js';
import { pingRedis, redisServerAvailable, startRedisServer } from './redis-server-process.js';
import { generatePassword, readServicesState, writeServicesState, type ServicesState } from './services-file.js';

// The target type and its parsing belong to the Redis layer; re-exported for the callers that take them from here.
export type { RedisTarget } from '../redis/redis-target.js';
export { configuredRedis } from '../redis/redis-target.js';

export interface ProvidedServices {
  redis: RedisTarget;
  database: { url: string; poolSize: number };
  /** How this process came by the embedded services: it runs them, it attached to another process's, or none are used. */
  embedded: 'owner' | 'attached' | 'none';
  /** Stops what this process started. Idempotent. */
  stop(): Promise<void>;
  /** Signals the embedded services to stop without waiting (for exit handlers and forced exits). */
  signalStop(): void;
}

/** Name of the database the embedded PostgreSQL serves the platform from. */
export const EMBEDDED_DATABASE = 'platform';
/** How long an attaching process waits for the owner's services to answer. */
const ATTACH_TIMEOUT_MS = 120_000;

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A port from the last run when it is still free, else any free one (undefined). */
async function previousPort(port: number | undefined): Promise<number | undefined> {
  return port !== undefined && (await isPortFree(port)) ? port : undefined;
}

export async function provideServices(
  config: Config,
  logger?: Logger,
  want: { redis?: boolean; database?: boolean } = { redis: true, database: true },
): Promise<ProvidedServices> {
  const needRedis = want.redis !== false && config.derived.embeddedRedis;
  const needDb = want.database !== false && config.derived.embeddedDatabase;
  const configured = {
    redis: configuredRedis(config) ?? { kind: 'single' as const, url: '' },
    database: { url: config.database.url ?? '', poolSize: config.database.poolSize },
  };
  if (!needRedis && !needDb) return { ...configured, embedded: 'none', stop: async () => undefined, signalStop: () => undefined };

  const dataDir = config.derived.dataDir;
  const lock = lockDataDir(dataDir);
  if (!lock.owned) return attach(config, lock.owner, { needRedis, needDb }, configured, logger);

  const state = readServicesState(dataDir);
  const stops: { name: string; stop: () => Promise<void>; signal: () => void }[] = [];
  const signalStop = () => {
    for (const s of stops) s.signal();
  };
  const onExit = () => signalStop();
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      for (const s of stops.splice(0).reverse()) await s.stop().catch((err) => logger?.error({ err, service: s.name }, 'stopping an embedded service failed'));
      try {
        writeServicesState(dataDir, { ...readServicesState(dataDir), owner: null });
      } finally {
        lock.release();
      }
    })());
  try {
    let redis: RedisTarget = configured.redis;
    if (needRedis) {
      if (!redisServerAvailable(config.redis.serverBin)) {
        throw new Error(
          `redis-server not found (${config.redis.serverBin}): install it (Debian/Ubuntu: apt-get install redis-server), ` +
            'or set REDIS_URL, or run `docker compose up -d redis postgres`',
        );
      }
      const password = state.redis?.password ?? generatePassword();
      const port = await previousPort(state.redis?.port);
      const dir = path.join(dataDir, 'redis');
      const server = await startRedisServer({ dir, bin: config.redis.serverBin, password, detached: true, ...(port ? { port } : {}) });
      stops.push({ name: 'redis', stop: server.stop, signal: server.signalStop });
      state.redis = { port: server.port, password, url: server.url };
      redis = { kind: 'single', url: server.url };
      logger?.info({ port: server.port, pid: server.pid, dir }, 'embedded redis-server started (127.0.0.1, password, AOF everysec)');
    }
    let database = configured.database;
    if (needDb) {
      const password = state.postgres?.password ?? generatePassword();
      const port = await previousPort(state.postgres?.port);
      const dir = path.join(dataDir, 'postgres');
      const server = await startPostgresServer({
        dir,
        password,
        database: EMBEDDED_DATABASE,
        detached: true,
        ...(port ? { port } : {}),
        onRelocated: (real) =>
          logger?.info(
            { dir, cluster: real },
            'the postgres user cannot reach DATA_DIR: the cluster is kept in a directory it can reach, linked from DATA_DIR',
          ),
      });
      stops.push({ name: 'postgres', stop: server.stop, signal: server.signalStop });
      state.postgres = { port: server.port, password, database: EMBEDDED_DATABASE, url: server.url };
      database = { url: server.url, poolSize: config.database.poolSize };
      logger?.info({ port: server.port, pid: server.pid, dir }, 'embedded PostgreSQL started (127.0.0.1, password)');
    }
    const runs = [...(needRedis ? (['redis'] as const) : []), ...(needDb ? (['postgres'] as const) : [])];
    writeServicesState(dataDir, { ...state, owner: { pid: process.pid, startedAt: new Date().toISOString(), runs } });
    return { redis, database, embedded: 'owner', stop, signalStop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits for the services of the process that owns DATA_DIR, then uses them. */
async function attach(
  config: Config,
  firstOwner: number,
  need: { needRedis: boolean; needDb: boolean },
  configured: { redis: RedisTarget; database: { url: string; poolSize: number } },
  logger?: Logger,
): Promise<ProvidedServices> {
  const dataDir = config.derived.dataDir;
  const deadline = Date.now() + ATTACH_TIMEOUT_MS;
  let owner = firstOwner;
  let waitingLogged = false;
  for (;;) {
    const state: ServicesState = readServicesState(dataDir);
    if (state.owner?.pid === owner) {
      const runs = state.owner.runs ?? [];
      if (need.needRedis && (!state.redis || !runs.includes('redis')))
        throw new Error(
          `the platform process ${owner} that owns ${dataDir} runs no embedded Redis (it uses REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): set the same here`,
        );
      if (need.needDb && (!state.postgres || !runs.includes('postgres')))
        throw new Error(`the platform process ${owner} that owns ${dataDir} runs no embedded PostgreSQL (it uses DATABASE_URL): set the same here`);
      const up =
        (!need.needRedis || (await pingRedis(state.redis!.port, state.redis!.password))) && (!need.needDb || (await postgresAnswers(state.postgres!.url)));
      if (up) {
        logger?.info(
          { owner, redisPort: need.needRedis ? state.redis!.port : undefined, postgresPort: need.needDb ? state.postgres!.port : undefined },
          'attached to the embedded services of a running platform process',
        );
        return {
          redis: need.needRedis ? { kind: 'single', url: state.redis!.url } : configured.redis,
          database: need.needDb ? { url: state.postgres!.url, poolSize: config.database.poolSize } : configured.database,
          embedded: 'attached',
          stop: async () => undefined,
          signalStop: () => undefined,
        };
      }
    }
    if (Date.now() > deadline)
      throw new Error(`the platform process ${owner} owns ${dataDir} but its services did not answer within ${ATTACH_TIMEOUT_MS / 1000} s`);
    if (!waitingLogged) logger?.info({ owner }, 'waiting for the embedded services of the platform process that owns DATA_DIR');
    waitingLogged = true;
    await sleep(200);
    // The owner may have died while we waited: then this process becomes the owner.
    const again = lockDataDir(dataDir);
    if (again.owned) {
      again.release();
      return provideServices(config, logger, { redis: need.needRedis, database: need.needDb });
    }
    owner = again.owner;
  }
}
