/**
 * The one HTTP server of a platform process, on HOST:PORT, built on the HTTP core (src/http:
 * createApp, listen): the platform's routes (/healthz; /readyz over the process's probes,
 * readiness.ts; /metrics guarded as everywhere: an admin's token, METRICS_TOKEN, or
 * METRICS_PUBLIC=true) and, in a process with the api role, the API's routes and Bull Board
 * (api-role.ts). A process without the api role (`npm run start:role -- feeds`, a compose worker
 * service) serves the platform's routes only: every other path is 404 `not_found`, /api included.
 * `npm start` (every role) runs one server: the API's.
 *
 * PORT=0 takes any free port (the process prints the address). A PORT in use:
 *   - stops the start, naming PORT, for the API and for any process with NODE_ENV=production:
 *     their address is what users, proxies and Prometheus were given;
 *   - in a worker-only process in development (`npm run start:role -- feeds` beside `npm start`,
 *     both with PORT=3000 from .env), takes any free port instead, with a warning naming PORT;
 *     the process prints the address it serves on.
 */
import type { AuthService } from '../auth/auth-service.js';
import { wireAuth } from '../auth/wiring.js';
import { ConfigError } from '../config/index.js';
import type { PlatformContext } from '../context.js';
import { createApp, type AppOptions, type DependencyProbe } from '../http/app.js';
import { proxyTrust } from '../http/client-address.js';
import type { AnyRoute } from '../http/route.js';
import { listen, type HttpServer } from '../http/server.js';
import type { Logger } from '../logging/logger.js';

export interface ProcessHttpOptions {
  /** The process's readiness probes (readiness.ts). */
  probes: DependencyProbe[];
  /** Checks the tokens of /metrics (and of the API's routes). */
  auth: AuthService;
  /** The API's routes and express mounts; none in a worker-only process. */
  routes?: AnyRoute[];
  mounts?: AppOptions['mounts'];
  /** Whether another free port may be taken when PORT is in use (see above). */
  portFallback: boolean;
  logger: Logger;
}

export async function serveProcessHttp(ctx: Pick<PlatformContext, 'config' | 'metrics' | 'observeRequest'>, options: ProcessHttpOptions): Promise<HttpServer> {
  const { http } = ctx.config;
  const app = createApp({
    logger: options.logger,
    metrics: ctx.metrics,
    auth: options.auth,
    routes: options.routes ?? [],
    probes: options.probes,
    bodyLimit: http.bodyLimit,
    trustProxy: proxyTrust(http.trustProxy, http.trustedProxies),
    metricsPublic: http.metricsPublic,
    ...(http.metricsToken ? { metricsToken: http.metricsToken } : {}),
    accessLog: http.accessLog,
    ...(options.mounts ? { mounts: options.mounts } : {}),
    deadlines: { outageMs: http.outageDeadlineMs, requestMs: http.requestDeadlineMs, dependencyCheckMs: http.dependencyCheckMs },
    ...(ctx.observeRequest ? { observe: ctx.observeRequest } : {}),
  });
  const serve = (port: number) =>
    listen(app, {
      host: http.host,
      port,
      graceMs: http.shutdownGraceMs,
      limits: {
        maxConnections: http.maxConnections,
        maxConnectionsPerAddress: http.maxConnectionsPerAddress,
        fdReserve: http.fdReserve,
        headersTimeoutMs: http.headersTimeoutMs,
        receiveTimeoutMs: http.receiveTimeoutMs,
        keepAliveTimeoutMs: http.keepAliveTimeoutMs,
      },
      logger: options.logger,
      metrics: ctx.metrics,
    });
  try {
    return await serve(http.port).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      if (!options.portFallback) {
        throw new ConfigError(
          'PORT',
          `${http.host}:${http.port} is in use by another program (another platform process?): give this process its own PORT, or PORT=0 for any free port`,
        );
      }
      const server = await serve(0);
      options.logger.warn(
        { port: http.port, url: server.url },
        `PORT ${http.port} is in use (by the API of a running platform?): serving health, readiness and metrics on ${server.url} instead; set PORT to choose`,
      );
      return server;
    });
  } catch (err) {
    app.close(); // its dependency monitor: nothing listens
    throw err;
  }
}

/**
 * The server of a process without the api role: health, readiness and metrics, nothing else.
 * It takes another free port when PORT is in use, outside production.
 */
export async function serveWorkerHttp(ctx: PlatformContext, probes: DependencyProbe[]): Promise<HttpServer> {
  // Checks the admin tokens /metrics accepts; its password threads never start (no login here).
  const { auth } = wireAuth(ctx);
  const server = await serveProcessHttp(ctx, {
    probes,
    auth,
    portFallback: ctx.config.core.nodeEnv !== 'production',
    logger: ctx.logger.child({ component: 'http' }),
  }).catch(async (err: unknown) => {
    await auth.close();
    throw err;
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await auth.close();
    },
  };
}
