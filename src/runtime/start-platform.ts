/**
 * Starts a platform process: configuration, logging, services (embedded or configured),
 * migrations, Redis and database connections, the queue registry, then the requested roles.
 *
 * Shutdown is ordered and idempotent: roles stop in reverse start order (the API stops taking
 * requests first, then workers finish or hand back their jobs), then the singleton works' leases
 * are released and the instance leaves the cluster registry, then queues, Redis connections, the
 * database and finally embedded services. Every process, whatever its roles, runs the cluster
 * coordination (src/cluster/coordination.ts): leases, shared config follower, registry heartbeat.
 */
import { createClusterCoordination } from '../cluster/coordination.js';
import { assertProductionSafe, describeConfig, loadConfig, type Config } from '../config/index.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { createDatabase } from '../db/client.js';
import { applyMigrations } from '../db/migrate.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { Metrics } from '../metrics/metrics.js';
import { connectionOptions, waitForReady } from '../redis/connection.js';
import { RedisConnections } from '../redis/connections.js';
import { createKeys } from '../redis/keys.js';
import { JOB_STATES } from '../queues/job-inspector.js';
import { QueueRegistry } from '../queues/registry.js';
import { provideServices } from '../services/provide-services.js';
import { roleStarters, ROLE_NAMES, type RoleName } from './roles.js';

export interface StartOptions {
  roles: readonly RoleName[];
  /** Environment to read settings from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** A parsed config instead of `env`. */
  config?: Config;
  logger?: Logger;
}

export interface PlatformHandle {
  ctx: PlatformContext;
  roles: RoleHandle[];
  /** URL of the API when the api role runs. */
  apiUrl?: string;
  stop(): Promise<void>;
}

const REDIS_READY_TIMEOUT_MS = 30_000;

export async function startPlatform(options: StartOptions): Promise<PlatformHandle> {
  const config = options.config ?? loadConfig(options.env);
  assertProductionSafe(config);
  const logger = options.logger ?? createLogger(config);
  logger.debug({ config: describeConfig(config) }, 'configuration');

  const cleanups: (() => Promise<void>)[] = [];
  const runCleanups = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch((err) => logger.error({ err }, 'shutdown step failed'));
  };

  try {
    const services = await provideServices(config, logger);
    cleanups.push(() => services.stop());

    if (config.database.migrateOnStart) {
      const applied = await applyMigrations(services.database.url);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    }
    const db = createDatabase({
      url: services.database.url,
      poolSize: services.database.poolSize,
      singleConnection: services.database.embedded,
      ...(services.database.embedded ? {} : { statementTimeoutMs: config.database.statementTimeoutMs }),
    });
    cleanups.push(() => db.close());

    const keys = createKeys(config.redis.prefix);
    const connections = new RedisConnections(services.redis, connectionOptions(config), logger);
    cleanups.push(() => connections.close());
    const redis = connections.create('command', 'commands');
    await waitForReady(redis, REDIS_READY_TIMEOUT_MS).catch((err: Error) => {
      throw new Error(`Redis is not reachable (${err.message}); check REDIS_URL / REDIS_CLUSTER_NODES`);
    });

    const queues = new QueueRegistry({ config, connections, keys });
    cleanups.push(() => queues.close());

    const metrics = new Metrics();
    metrics.onScrape(async () => {
      await Promise.all(
        queues.all().map(async (q) => {
          const counts = await q.getJobCounts(...JOB_STATES);
          for (const [state, n] of Object.entries(counts)) metrics.queueJobs.set({ queue: q.name, state }, n);
        }),
      );
    });
    metrics.onScrape(async () => {
      metrics.dependencyUp.set({ dependency: 'redis' }, (await redis.ping().catch(() => '')) === 'PONG' ? 1 : 0);
      metrics.dependencyUp.set({ dependency: 'database' }, (await db.ping()) ? 1 : 0);
    });

    // Every process: config follower, registry heartbeat, leases (stopped in reverse: leases are
    // released after the roles stopped, then the instance leaves the registry).
    const cluster = createClusterCoordination({ config, connections, redis, keys, db, logger, metrics });
    cleanups.push(() => cluster.sharedConfig.stop());
    cleanups.push(() => cluster.registry.stop());
    cleanups.push(() => cluster.leadership.stop());
    await cluster.sharedConfig.start();

    const ctx: PlatformContext = {
      config,
      logger,
      metrics,
      instanceId: config.derived.instanceId,
      keys,
      connections,
      redis,
      queues,
      db,
      leadership: cluster.leadership,
      sharedConfig: cluster.sharedConfig,
    };

    const roles: RoleHandle[] = [];
    const ordered = ROLE_NAMES.filter((r) => options.roles.includes(r));
    for (const name of ordered) {
      const handle = await roleStarters[name](ctx);
      roles.push(handle);
      cleanups.push(() => handle.stop());
      logger.debug({ role: name, queues: handle.queues }, 'role started');
    }
    cluster.registry.start({ roles: roles.map((r) => r.name), queues: roles.flatMap((r) => r.queues) });
    const api = roles.find((r) => r.name === 'api') as (RoleHandle & { url?: string }) | undefined;

    let stopping: Promise<void> | undefined;
    return {
      ctx,
      roles,
      ...(api?.url ? { apiUrl: api.url } : {}),
      stop: () =>
        (stopping ??= (async () => {
          logger.info('stopping');
          await runCleanups();
          logger.info('stopped');
        })()),
    };
  } catch (err) {
    await runCleanups();
    throw err;
  }
}
