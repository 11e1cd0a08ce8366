/**
 * The API role: every route on node:http (src/http/app.ts), Bull Board behind login, health, readiness
 * and metrics, on the process's one HTTP server (process-http.ts) at HOST:PORT. At start: the admin
 * of the environment is created or updated, and in production every account still holding the
 * example password is disabled.
 */
import { bullBoardMount } from '../../dashboards/bull-board.js';
import { wireAuth } from '../auth/wiring.js';
import { EXAMPLE_ADMIN_PASSWORD } from '../config/auth.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import type { DependencyProbe } from '../http/app.js';
import { allRoutes } from '../http/routes/index.js';
import { wireApi } from './api-wiring.js';
import { serveProcessHttp } from './process-http.js';

export interface ApiRoleHandle extends RoleHandle {
  url: string;
}

export async function startApiRole(ctx: PlatformContext, probes: DependencyProbe[]): Promise<ApiRoleHandle> {
  const { config } = ctx;
  const wiredAuth = wireAuth(ctx);
  const { auth, accounts } = wiredAuth;
  await accounts.ensureAdmin(config.auth.adminUsername, config.auth.adminPassword);
  if (config.core.nodeEnv === 'production') await accounts.disableExamplePasswords(EXAMPLE_ADMIN_PASSWORD);
  const services = wireApi(ctx, wiredAuth);
  const server = await serveProcessHttp(ctx, {
    probes,
    auth,
    routes: allRoutes(services),
    // Bull Board's buttons go through the same job console as the REST routes.
    mounts: [bullBoardMount({ queues: ctx.queues, jobs: services.jobs, cookieSecure: config.auth.cookieSecure, bodyLimit: config.http.bodyLimit })],
    // Users, proxies and scrapers were given the API's address: a PORT in use stops the start.
    portFallback: false,
    logger: ctx.logger.child({ role: 'api' }),
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
