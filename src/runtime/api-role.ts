/**
 * The API role: every route on node:http (src/http/app.ts), Bull Board behind login, health, readiness
 * and metrics, listening on HOST:PORT. At start: the admin of the environment is created or
 * updated, and in production every account still holding the example password is disabled.
 */
import { bullBoardMount } from '../../dashboards/bull-board.js';
import { wireAuth } from '../auth/wiring.js';
import { EXAMPLE_ADMIN_PASSWORD } from '../config/auth.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { createApp } from '../http/app.js';
import { proxyTrust } from '../http/client-address.js';
import { allRoutes } from '../http/routes/index.js';
import { listen } from '../http/server.js';
import { wireApi } from './api-wiring.js';

export interface ApiRoleHandle extends RoleHandle {
  url: string;
}

export async function startApiRole(ctx: PlatformContext): Promise<ApiRoleHandle> {
  const { config } = ctx;
  const wiredAuth = wireAuth(ctx);
  const { auth, accounts } = wiredAuth;
  await accounts.ensureAdmin(config.auth.adminUsername, config.auth.adminPassword);
  if (config.core.nodeEnv === 'production') await accounts.disableExamplePasswords(EXAMPLE_ADMIN_PASSWORD);
  const services = wireApi(ctx, wiredAuth);
  const app = createApp({
    logger: ctx.logger.child({ role: 'api' }),
    metrics: ctx.metrics,
    auth,
    routes: allRoutes(services),
    probes: [
      { name: 'redis', check: async () => (await ctx.redis.ping()) === 'PONG' },
      { name: 'database', check: () => ctx.db.ping() },
    ],
    bodyLimit: config.http.bodyLimit,
    trustProxy: proxyTrust(config.http.trustProxy, config.http.trustedProxies),
    metricsPublic: config.http.metricsPublic,
    ...(config.http.metricsToken ? { metricsToken: config.http.metricsToken } : {}),
    accessLog: config.http.accessLog,
    // Bull Board's buttons go through the same job console as the REST routes.
    mounts: [bullBoardMount({ queues: ctx.queues, jobs: services.jobs, cookieSecure: config.auth.cookieSecure, bodyLimit: config.http.bodyLimit })],
    deadlines: { outageMs: config.http.outageDeadlineMs, requestMs: config.http.requestDeadlineMs, dependencyCheckMs: config.http.dependencyCheckMs },
    ...(ctx.observeRequest ? { observe: ctx.observeRequest } : {}),
  });
  const { http } = config;
  const server = await listen(app, {
    host: http.host,
    port: http.port,
    graceMs: http.shutdownGraceMs,
    limits: {
      maxConnections: http.maxConnections,
      maxConnectionsPerAddress: http.maxConnectionsPerAddress,
      fdReserve: http.fdReserve,
      headersTimeoutMs: http.headersTimeoutMs,
      receiveTimeoutMs: http.receiveTimeoutMs,
      keepAliveTimeoutMs: http.keepAliveTimeoutMs,
    },
    logger: ctx.logger.child({ role: 'api' }),
    metrics: ctx.metrics,
  });
  return {
    name: 'api',
    queues: [],
    url: server.url,
    stop: async () => {
      await server.close();
      await auth.close();
    },
  };
}
