/**
 * The API role: the express app with every route, Bull Board behind login, health, readiness
 * and metrics, listening on HOST:PORT.
 */
import { bullBoardMount } from '../../dashboards/bull-board.js';
import { AuthService } from '../auth/auth-service.js';
import { ensureAdminUser } from '../auth/users.js';
import type { PlatformContext, RoleHandle } from '../context.js';
import { createApp } from '../http/app.js';
import { allRoutes } from '../http/routes/index.js';
import { listen } from '../http/server.js';

export interface ApiRoleHandle extends RoleHandle {
  url: string;
}

export async function startApiRole(ctx: PlatformContext): Promise<ApiRoleHandle> {
  const { config } = ctx;
  await ensureAdminUser(ctx.db.prisma, config.auth.adminUsername, config.auth.adminPassword);
  const auth = new AuthService({ prisma: ctx.db.prisma, redis: ctx.redis, keys: ctx.keys, settings: config.auth });
  const app = createApp({
    logger: ctx.logger.child({ role: 'api' }),
    metrics: ctx.metrics,
    auth,
    routes: allRoutes({ ctx, auth }),
    probes: [
      { name: 'redis', check: async () => (await ctx.redis.ping()) === 'PONG' },
      { name: 'database', check: () => ctx.db.ping() },
    ],
    bodyLimit: config.http.bodyLimit,
    trustProxy: config.http.trustProxy,
    metricsPublic: config.http.metricsPublic,
    ...(config.http.metricsToken ? { metricsToken: config.http.metricsToken } : {}),
    accessLog: config.http.accessLog,
    mounts: [bullBoardMount({ queues: ctx.queues.all(), cookieSecure: config.auth.cookieSecure })],
  });
  const server = await listen(app, config.http.host, config.http.port, config.http.shutdownGraceMs, ctx.logger.child({ role: 'api' }));
  return { name: 'api', queues: [], url: server.url, stop: () => server.close() };
}
