/**
 * Starts a platform process: configuration, logging, services (embedded or configured),
 * migrations, Redis and database connections, the queue registry, then the requested roles.
 *
 * Shutdown is ordered and idempotent: the roles stop together (the API stops taking requests
 * while the workers finish or hand back their jobs), then the singleton tasks' leases are
 * released and the instance leaves the instance registry, then queues, Redis connections, the
 * database and finally the embedded services this process runs (run.ts gives the whole stop a
 * deadline; the services are stopped even when it passes). An embedded service that is down
 * when the stop begins is brought back at once, and the Redis connections are back, before the
 * roles stop, so that they can hand back their jobs; the steps are not waited for once a service
 * they need is lost (they could only wait for the deadline). Every process, whatever its roles,
 * runs the coordination (src/coordination/coordination.ts): leases, shared config follower,
 * registry heartbeat (with the digests of the fleet settings its roles use, compared with the
 * running instances' at start: src/coordination/fleet-settings.ts).
 *
 * Every process serves HTTP on HOST:PORT (process-http.ts): the API's server with the api role;
 * without it, a server of health, readiness and metrics only, listening before the roles start
 * (a PORT in use stops the start before any job is taken) and closed after they stopped (the
 * metrics of a stop stay readable while the workers finish).
 */
import { assertProductionSafe, describeConfig, loadConfig, type Config } from '../config/index.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { createCoordination } from '../coordination/coordination.js';
import { reportFleetSettingDifferences } from '../coordination/fleet-settings-check.js';
import { fleetSettingDigests } from '../coordination/fleet-settings.js';
import { createDatabase, queryTimeoutOf } from '../db/client.js';
import { applyMigrations } from '../db/migrate.js';
import { settlesWithin } from '../lib/timeout.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { Metrics } from '../metrics/metrics.js';
import { connectionOptions, waitForReady } from '../redis/connection.js';
import { RedisConnections } from '../redis/connections.js';
import { createKeys } from '../redis/keys.js';
import { describeTarget } from '../redis/redis-target.js';
import { checkRedisServer } from '../redis/redis-version.js';
import { replicaAckSettings } from '../redis/replica-ack.js';
import { JOB_STATES } from '../queues/job-states.js';
import { queues as queueDefinitions, type QueueKey } from '../queues/definitions.js';
import { parseShardSpec } from '../config/shard-spec.js';
import { recordLayout } from '../queues/recorded-layouts.js';
import { QueueRegistry } from '../queues/registry.js';
import { provideServices, type ProvidedServices } from '../services/provide-services.js';
import type { LostService } from '../services/supervised-service.js';
import { assertCrawlerProductionSafe } from './crawler-role.js';
import { serveWorkerHttp } from './process-http.js';
import { readinessProbes } from './readiness.js';
import { roleStarters, ROLE_NAMES, type RoleName } from './roles.js';
import { sharedConfigContent } from './shared-config-content.js';
import type { Tracing } from '../tracing/tracing.js';

export interface StartOptions {
  roles: readonly RoleName[];
  /** Environment to read settings from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** A parsed config instead of `env`. */
  config?: Config;
  logger?: Logger;
  /** Tracing, started by the process entry before the platform was loaded (src/tracing/start-tracing.ts); none without. */
  tracing?: Tracing;
}

export interface PlatformHandle {
  ctx: PlatformContext;
  roles: RoleHandle[];
  /** URL of the API when the api role runs. */
  apiUrl?: string;
  /** URL of the process's HTTP server: the API's, or health, readiness and metrics only. */
  httpUrl: string;
  /** How this process came by the embedded services (it runs them, attached to another process's, or none). */
  embedded: ProvidedServices['embedded'];
  /**
   * Stops the process's work in order, then the services it runs. With a deadline, whatever has
   * not finished by then is logged and left (jobs still active are retried as stalled) and the
   * services are stopped anyway. Resolves true when everything finished in time. Idempotent.
   */
  stop(options?: { deadlineMs?: number }): Promise<boolean>;
  /** Signals the embedded services this process runs to stop, without waiting (forced exit). */
  signalServicesStop(): void;
  /** Resolves when an embedded service this process runs died and could not be restarted: the process must stop. */
  servicesLost: Promise<LostService>;
}

/** A named step of the shutdown: its name shows in the log when it does not finish in time. */
interface StopStep {
  name: string;
  run: () => Promise<void>;
}

const REDIS_READY_TIMEOUT_MS = 30_000;
/** How long a stop waits for the Redis connections to come back after a restart (ioredis retries every 2 s at most). */
const RECONNECT_MS = 5000;
/** How long the stop waits for the last spans to be exported (a collector that does not answer must not hold it up). */
const TRACING_FLUSH_MS = 3000;

export async function startPlatform(options: StartOptions): Promise<PlatformHandle> {
  const config = options.config ?? loadConfig(options.env);
  assertProductionSafe(config);
  if (options.roles.includes('crawler')) assertCrawlerProductionSafe(config);
  const logger = options.logger ?? createLogger(config);
  logger.debug({ config: describeConfig(config) }, 'configuration');

  // Stopped in reverse order of this list; the services come last, outside it (see stop()).
  const steps: StopStep[] = [];
  const pending = new Set<string>();
  const runStep = async (step: StopStep) => {
    pending.add(step.name);
    try {
      await step.run();
    } catch (err) {
      logger.error({ err, step: step.name }, 'shutdown step failed');
    } finally {
      pending.delete(step.name);
    }
  };
  const runSteps = async () => {
    for (const step of steps.splice(0).reverse()) await runStep(step);
  };

  let services: ProvidedServices | undefined;
  const { tracing } = options;
  if (tracing) {
    // Last of the steps: the spans of the stop itself are exported too.
    steps.push({
      name: 'tracing',
      run: async () => {
        if (!(await tracing.shutdown(TRACING_FLUSH_MS))) logger.warn({ waitedMs: TRACING_FLUSH_MS }, 'tracing: the last spans were not exported in time');
      },
    });
  }
  try {
    services = await provideServices(config, logger);

    if (config.database.migrateOnStart) {
      const applied = await applyMigrations(services.database.url);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    }
    const db = createDatabase({
      url: services.database.url,
      poolSize: services.database.poolSize,
      statementTimeoutMs: config.database.statementTimeoutMs,
      connectTimeoutMs: config.database.connectTimeoutMs,
      queryTimeoutMs: queryTimeoutOf(config.database),
      logger,
    });
    steps.push({ name: 'database connections', run: () => db.close() });

    const keys = createKeys(config.redis.prefix);
    const connections = new RedisConnections(services.redis, connectionOptions(config), logger, replicaAckSettings(config));
    steps.push({ name: 'redis connections', run: () => connections.close() });
    const redis = connections.create('command', 'commands');
    const target = services.redis;
    await waitForReady(redis, REDIS_READY_TIMEOUT_MS).catch((err: Error) => {
      throw new Error(`Redis is not reachable at ${describeTarget(target)} (${err.message}); check REDIS_URL / REDIS_SENTINELS / REDIS_CLUSTER_NODES`);
    });
    await checkRedisServer(redis, describeTarget(target), logger);

    const layout = await recordLayout(
      { redis, keys, logger, registryFor: (l) => new QueueRegistry({ config, connections, keys, layout: l }) },
      {
        prefix: config.redis.prefix,
        cluster: services.redis.kind === 'cluster',
        shards: config.queues.shards,
        consumed: parseShardSpec(config.queues.workerShards, config.queues.shards),
      },
    );
    const queues = new QueueRegistry({ config, connections, keys, layout, ...(tracing ? { telemetry: tracing.telemetry } : {}) });
    steps.push({ name: 'queues', run: () => queues.close() });

    const metrics = new Metrics();
    metrics.onScrape(async () => {
      // Partitions count under their registered queue's name (crawl, not crawl.3-of-6): the series,
      // dashboards and alert rules stay the same whatever QUEUE_SHARDS is.
      await Promise.all(
        (Object.keys(queueDefinitions) as QueueKey[]).map(async (key) => {
          const perQueue = await Promise.all(queues.everywhere(key).map((q) => q.getJobCounts(...JOB_STATES)));
          for (const state of JOB_STATES) {
            metrics.queueJobs.set(
              { queue: queueDefinitions[key].name, state },
              perQueue.reduce((n, c) => n + (c[state] ?? 0), 0),
            );
          }
        }),
      );
    });
    metrics.onScrape(async () => {
      metrics.dependencyUp.set({ dependency: 'redis' }, (await redis.ping().catch(() => '')) === 'PONG' ? 1 : 0);
      metrics.dependencyUp.set({ dependency: 'database' }, (await db.ping()) ? 1 : 0);
    });
    exportEmbeddedServices(metrics, services);

    // Every process: config follower, registry heartbeat, leases (stopped in reverse: leases are
    // released after the roles stopped, then the instance leaves the registry).
    const coordination = createCoordination({ config, connections, redis, keys, computeSharedConfig: sharedConfigContent(db), logger, metrics });
    steps.push({ name: 'shared config follower', run: () => coordination.sharedConfig.stop() });
    steps.push({ name: 'instance registry', run: () => coordination.registry.stop() });
    steps.push({ name: 'leases', run: () => coordination.leadership.stop() });
    await coordination.ready(REDIS_READY_TIMEOUT_MS);
    await coordination.sharedConfig.start();

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
      leadership: coordination.leadership,
      sharedConfig: coordination.sharedConfig,
      ...(tracing ? { telemetry: tracing.telemetry, observeRequest: tracing.observeRequest } : {}),
    };

    const embeddedStatus = services.embeddedStatus;
    const probes = readinessProbes(ctx, options.roles, () => embeddedStatus());
    const workerHttp = options.roles.includes('api') ? undefined : await serveWorkerHttp(ctx, probes);
    if (workerHttp) steps.push({ name: 'http server', run: () => workerHttp.close() });

    // Roles start in order and stop together: the API stops taking requests while each worker
    // role stops taking jobs and lets its active ones finish, all within one grace period.
    const roles: RoleHandle[] = [];
    steps.push({
      name: 'roles',
      run: async () => {
        await Promise.all(roles.map((role) => runStep({ name: `role ${role.name}`, run: () => role.stop() })));
      },
    });
    const ordered = ROLE_NAMES.filter((r) => options.roles.includes(r));
    for (const name of ordered) {
      const handle = await roleStarters[name](ctx, { probes });
      roles.push(handle);
      logger.debug({ role: name, queues: handle.queues }, 'role started');
    }
    const roleNames = roles.map((r) => r.name);
    const settings = fleetSettingDigests(config, roleNames);
    await reportFleetSettingDifferences({ redis, keys, self: { id: ctx.instanceId, settings }, logger });
    coordination.registry.start({ roles: roleNames, queues: roles.flatMap((r) => r.queues), settings });
    const api = roles.find((r) => r.name === 'api') as (RoleHandle & { url?: string }) | undefined;

    const provided = services;
    let stopping: Promise<boolean> | undefined;
    return {
      ctx,
      roles,
      embedded: provided.embedded,
      ...(api?.url ? { apiUrl: api.url } : {}),
      httpUrl: api?.url ?? workerHttp!.url,
      signalServicesStop: () => provided.signalStop(),
      servicesLost: provided.lost,
      stop: (stopOptions = {}) =>
        (stopping ??= (async () => {
          logger.info('stopping');
          const work = (async () => {
            // An embedded service that is down comes back first (or is given up), and the Redis
            // connections reconnect, before the roles stop: a BullMQ worker closed while its
            // connection is down or reconnecting never closes (BullMQ #4656) and would wait out
            // the grace period (a Ctrl-C right after the redis-server died took 35 s).
            if (await provided.recover()) await connections.settled(RECONNECT_MS);
            await runSteps();
          })();
          // The steps end, or the deadline passes, or a service they need is lost (they would wait for the deadline).
          const lost = provided.lost.then((l) => l.service);
          const ended = stopOptions.deadlineMs === undefined ? work.then(() => true) : settlesWithin(work, stopOptions.deadlineMs);
          const outcome = await Promise.race([ended.then((inTime) => (inTime ? 'finished' : 'deadline')), lost]);
          if (outcome === 'deadline') {
            logger.error(
              { unfinished: [...pending], deadlineMs: stopOptions.deadlineMs },
              'shutdown deadline passed; stopping the services and exiting with these steps unfinished (their active jobs are retried as stalled)',
            );
          } else if (outcome !== 'finished') {
            logger.error(
              { unfinished: [...pending], service: outcome },
              `the embedded ${outcome} is lost; stopping the services and exiting with these steps unfinished (their active jobs are retried as stalled)`,
            );
          }
          await provided.stop();
          logger.info('stopped');
          return outcome === 'finished';
        })()),
    };
  } catch (err) {
    await runSteps();
    await services?.stop();
    throw err;
  }
}

/**
 * wp_embedded_service_up and wp_embedded_service_restarts_total for the embedded services this
 * process runs (none unless it owns DATA_DIR), read from their supervisors at scrape time.
 */
function exportEmbeddedServices(metrics: Metrics, services: ProvidedServices): void {
  if (!services.embeddedStatus().length) return;
  const up = metrics.gauge('wp_embedded_service_up', '1 while the embedded service this process runs answers, 0 while it is down or being restarted.', [
    'service',
  ]);
  const restarts = metrics.counter(
    'wp_embedded_service_restarts_total',
    'Restarts of an embedded service (redis, postgres) that died, by the process that runs it.',
    ['service'],
  );
  const counted = new Map<string, number>();
  const collect = () => {
    for (const s of services.embeddedStatus()) {
      up.set({ service: s.service }, s.up ? 1 : 0);
      restarts.inc({ service: s.service }, s.restarts - (counted.get(s.service) ?? 0));
      counted.set(s.service, s.restarts);
    }
  };
  collect();
  metrics.onScrape(async () => collect());
}
