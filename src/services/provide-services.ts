/**
 * Provides Redis and PostgreSQL to a process: the configured servers (REDIS_URL /
 * REDIS_SENTINELS / REDIS_CLUSTER_NODES, DATABASE_URL), or the embedded default under DATA_DIR
 * (docs/operations.md#embedded-services, README "Embedded services").
 *
 * Invariants of the embedded default: the process holding the DATA_DIR lock owns the services
 * (private children in their own process groups, 127.0.0.1 only, the generated passwords and the
 * ports kept in `services.json`, 0600, across restarts and crashes: services a dead owner left
 * running are stopped first); it supervises them (supervised-service.ts) and stops them last. Any
 * other process with the same DATA_DIR attaches: it waits for the owner's services and starts and
 * stops nothing. An owner warns before starting a second platform from this checkout with another
 * DATA_DIR (running-platforms.ts).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import { configuredRedis, type RedisTarget } from '../redis/redis-target.js';
import { lockDataDir } from './data-dir-lock.js';
import { isPortFree } from './free-port.js';
import { startPostgresServer, stopLeftBehindPostgres } from './postgres-server-process.js';
import { securePrivateDataDir } from './private-data-dir.js';
import { pingRedis, redisServerAvailable, startRedisServer, stopLeftBehindRedis } from './redis-server-process.js';
import { DEFAULT_RESTART_POLICY } from './restart-budget.js';
import { otherRunningPlatforms, recordRunningPlatform, type RunningPlatform } from './running-platforms.js';
import { generatePassword, readServicesState, writeServicesState, type ServicesState } from './services-file.js';
import { SupervisedService, type EmbeddedServiceName, type LostService, type ServiceStatus } from './supervised-service.js';

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
  /** The embedded services this process runs and their state (empty unless it is the owner). */
  embeddedStatus(): ServiceStatus[];
  /** Resolves when an embedded service this process runs could not be restarted; never otherwise. */
  lost: Promise<LostService>;
  /**
   * The process begins to stop. Resolves true once the embedded services it uses answer (the owner
   * restarts one that is down at once, without backoff: supervised-service.ts), false when it uses
   * none, one is lost, or they do not answer within a few seconds. The roles should not begin to
   * stop while a service is down: a worker's close needs Redis (start-platform.ts).
   */
  recover(): Promise<boolean>;
}

/** How long an attached process's stop waits for the owner's services to answer. */
const ATTACHED_RECOVER_MS = 5000;
/** Beyond the supervisors' stopping window, how long the owner's stop waits for its services to answer. */
const RECOVER_SLACK_MS = 2000;

/** For a process that runs no embedded service. */
const UNSUPERVISED = { embeddedStatus: () => [], lost: new Promise<LostService>(() => undefined) };

/** Name of the database the embedded PostgreSQL serves the platform from. */
export const EMBEDDED_DATABASE = 'platform';
/** How long an attaching process waits for the owner's services to answer. */
const ATTACH_TIMEOUT_MS = 120_000;

/** Polls `check` every 100 ms until it answers true (true) or 'lost' (false), or `timeoutMs` passes (false). */
async function answersWithin(check: () => Promise<boolean | 'lost'>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer !== false) return answer === true;
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
}

/** Whether the embedded services recorded in `state` (those of `need`) answer now. */
async function embeddedAnswer(state: ServicesState, need: { needRedis: boolean; needDb: boolean }): Promise<boolean> {
  return (
    (!need.needRedis || (state.redis !== undefined && (await pingRedis(state.redis.port, state.redis.password)))) &&
    (!need.needDb || (state.postgres !== undefined && (await postgresAnswers(state.postgres.url))))
  );
}

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

/** A port from the last run when it is free (once what a dead owner left running is stopped), else any free one (undefined). */
async function previousPort(port: number | undefined): Promise<number | undefined> {
  return port !== undefined && (await isPortFree(port)) ? port : undefined;
}

/** Logs a move off the recorded port: processes attached to DATA_DIR dial the old one until restarted. */
function warnMoved(logger: Logger | undefined, service: EmbeddedServiceName, recorded: number | undefined, port: number): void {
  if (recorded === undefined || recorded === port) return;
  logger?.warn(
    { service, recorded, port },
    `the ${service} port of the last run (${recorded}) is taken by another program; moved to ${port}: restart the processes attached to DATA_DIR`,
  );
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
  if (!needRedis && !needDb)
    return { ...configured, ...UNSUPERVISED, embedded: 'none', stop: async () => undefined, signalStop: () => undefined, recover: async () => false };

  const dataDir = config.derived.dataDir;
  const lock = lockDataDir(dataDir);
  if (!lock.owned) return attach(config, lock.owner, { needRedis, needDb }, configured, logger);

  warnSecondPlatform(otherRunningPlatforms(), dataDir, { needRedis, needDb }, logger);
  const unrecord = recordRunningPlatform(dataDir);
  securePrivateDataDir(dataDir, logger);
  const state = readServicesState(dataDir);
  const stops: { name: string; stop: () => Promise<void>; signal: () => void }[] = [];
  const supervised: SupervisedService[] = [];
  const policy = { ...DEFAULT_RESTART_POLICY, attempts: config.core.embeddedRestartAttempts };
  const signalStop = () => {
    for (const s of stops) s.signal();
  };
  const onExit = () => {
    signalStop();
    unrecord();
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      for (const s of stops.splice(0).reverse()) await s.stop().catch((err) => logger?.error({ err, service: s.name }, 'stopping an embedded service failed'));
      try {
        writeServicesState(dataDir, { ...readServicesState(dataDir), owner: null });
      } finally {
        unrecord();
        lock.release();
      }
    })());
  const supervise = (service: SupervisedService) => {
    supervised.push(service);
    stops.push({ name: service.status().service, stop: () => service.stop(), signal: () => service.signalStop() });
  };
  try {
    const redisDir = path.join(dataDir, 'redis');
    const postgresDir = path.join(dataDir, 'postgres');
    // Services a dead owner left running hold the recorded ports: stopped first, the ports are free again.
    if (needRedis) {
      const left = await stopLeftBehindRedis(redisDir);
      if (left) logger?.info({ pid: left, dir: redisDir }, 'stopped the redis-server a previous owner of DATA_DIR left running');
    }
    if (needDb) {
      const left = await stopLeftBehindPostgres(postgresDir);
      if (left) logger?.info({ pid: left, dir: postgresDir }, 'stopped the PostgreSQL server a previous owner of DATA_DIR left running');
    }
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
      const options = { dir: redisDir, bin: config.redis.serverBin, password, detached: true };
      const server = await startRedisServer({ ...options, ...(port ? { port } : {}) });
      supervise(
        new SupervisedService(
          {
            service: 'redis',
            label: 'redis-server',
            logFile: path.join(redisDir, 'redis.log'),
            start: () => startRedisServer({ ...options, port: server.port }),
            policy,
            ...(logger ? { logger } : {}),
          },
          server,
        ),
      );
      warnMoved(logger, 'redis', state.redis?.port, server.port);
      state.redis = { port: server.port, password, url: server.url };
      redis = { kind: 'single', url: server.url };
      logger?.info({ port: server.port, pid: server.pid, dir: redisDir }, 'embedded redis-server started (127.0.0.1, password, AOF everysec)');
    }
    let database = configured.database;
    if (needDb) {
      const password = state.postgres?.password ?? generatePassword();
      const port = await previousPort(state.postgres?.port);
      const options = { dir: postgresDir, password, database: EMBEDDED_DATABASE, detached: true };
      const server = await startPostgresServer({
        ...options,
        ...(port ? { port } : {}),
        onRelocated: (real) =>
          logger?.info(
            { dir: postgresDir, cluster: real },
            'the postgres user cannot reach DATA_DIR: the cluster is kept in a directory it can reach, linked from DATA_DIR',
          ),
      });
      supervise(
        new SupervisedService(
          {
            service: 'postgres',
            label: 'PostgreSQL',
            logFile: path.join(server.dir, 'server.log'),
            start: () => startPostgresServer({ ...options, port: server.port, existingOnly: true }),
            policy,
            ...(logger ? { logger } : {}),
          },
          server,
        ),
      );
      warnMoved(logger, 'postgres', state.postgres?.port, server.port);
      state.postgres = { port: server.port, password, database: EMBEDDED_DATABASE, url: server.url };
      database = { url: server.url, poolSize: config.database.poolSize };
      logger?.info({ port: server.port, pid: server.pid, dir: postgresDir }, 'embedded PostgreSQL started (127.0.0.1, password)');
    }
    const runs = [...(needRedis ? (['redis'] as const) : []), ...(needDb ? (['postgres'] as const) : [])];
    writeServicesState(dataDir, { ...state, owner: { pid: process.pid, startedAt: new Date().toISOString(), runs } });
    return {
      redis,
      database,
      embedded: 'owner',
      stop,
      signalStop,
      embeddedStatus: () => supervised.map((s) => s.status()),
      lost: Promise.race(supervised.map((s) => s.lost)),
      recover: () => {
        for (const s of supervised) s.hurry();
        return answersWithin(async () => {
          const statuses = supervised.map((s) => s.status());
          if (statuses.some((s) => s.lost)) return 'lost';
          return statuses.every((s) => s.up) && (await embeddedAnswer(state, { needRedis, needDb }));
        }, policy.stoppingWindowMs + RECOVER_SLACK_MS);
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A process about to start its own embedded services while a platform runs from the same
 * checkout with another DATA_DIR (`npm run start:role -- feeds` in a terminal without the
 * DATA_DIR `npm start` was given) says what it is about to do and how to join instead.
 */
function warnSecondPlatform(others: RunningPlatform[], dataDir: string, need: { needRedis: boolean; needDb: boolean }, logger?: Logger): void {
  const what = [need.needRedis ? 'Redis' : '', need.needDb ? 'PostgreSQL' : ''].filter(Boolean).join(' and ');
  for (const other of others.filter((o) => o.dataDir !== dataDir).slice(0, 3)) {
    logger?.warn(
      { runningDataDir: other.dataDir, runningPid: other.pid, dataDir },
      `a platform from this checkout runs with DATA_DIR=${other.dataDir} (process ${other.pid}, since ${other.startedAt}); ` +
        `this process starts its own embedded ${what} in DATA_DIR=${dataDir}: a second platform, with its own data and jobs. ` +
        `To add this process to the running platform instead, stop it and start it with DATA_DIR=${other.dataDir}`,
    );
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
          ...UNSUPERVISED,
          // Waits only while an owner runs the services (it may be restarting one): none does once it stopped.
          recover: () =>
            answersWithin(async () => {
              const now = readServicesState(dataDir);
              return now.owner === null ? 'lost' : embeddedAnswer(now, need);
            }, ATTACHED_RECOVER_MS),
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
