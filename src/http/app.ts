/**
 * The HTTP side of the API role, as one node:http request listener. A request travels:
 *
 *   request-wrapper.ts  begins it (request id, the clock), then
 *   dispatcher.ts       serves it when a declared route takes its path (the API's routes and the
 *                       platform's own: health, readiness, metrics, OpenAPI), else
 *   express-mount.ts    hands it to an express app mounted beside the dispatcher for its prefix
 *                       (Bull Board under /admin), else
 *   404 `not_found`;
 *
 * and every answer, whoever wrote it, carries the request id and the security headers, has its
 * errors mapped by error-reply.ts, and is counted in the request metrics and the access log. A
 * request its handler leaves unanswered too long is answered by the wrapper's deadline, naming
 * the dependency the monitor (dependency-monitor.ts, shared with /readyz) finds down.
 */
import type { RequestListener } from 'node:http';
import type { AuthService } from '../auth/auth-service.js';
import type { RequestObserver } from '../context.js';
import { NotFoundError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { authenticator } from './authenticate.js';
import { clientAddress, type ProxyTrust } from './client-address.js';
import { dispatcher } from './dispatcher.js';
import { mountServes, requireAuth, serveExpress, type ExpressMount, type MountContext } from './express-mount.js';
import { buildOpenApi } from './openapi.js';
import { RequestWrapper, type Exchange } from './request-wrapper.js';
import type { AnyRoute } from './route.js';
import { DependencyMonitor, type DependencyProbe } from './dependency-monitor.js';
import { platformRoutes } from './routes/platform-routes.js';

export type { DependencyProbe } from './dependency-monitor.js';

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
  auth: AuthService;
  routes: AnyRoute[];
  probes: DependencyProbe[];
  /** Largest JSON body, bytes. */
  bodyLimit: number;
  /** Which X-Forwarded-For entries to believe (client-address.ts). */
  trustProxy: ProxyTrust;
  metricsPublic: boolean;
  /** A static bearer token for Prometheus scrapes of /metrics (an admin's token works too). */
  metricsToken?: string;
  accessLog: boolean;
  /** Express apps beside the dispatcher (Bull Board), each given what it needs to check credentials. */
  mounts?: ((context: MountContext) => ExpressMount)[];
  /** The deadlines (request-wrapper.ts) and the dependency monitor's interval; none without. */
  deadlines?: { outageMs: number; requestMs: number; dependencyCheckMs: number };
  /** Around every request (tracing); none without. */
  observe?: RequestObserver;
}

/** What the API's node:http server is created with (server.ts). */
export interface HttpApp {
  listener: RequestListener;
  /** Stops the dependency monitor and the deadline's sweep (the server stopped). Idempotent. */
  close(): void;
}

export function createApp(options: AppOptions): HttpApp {
  const authenticate = authenticator(options.auth);
  const address = clientAddress(options.trustProxy);
  let openapi: string | undefined;
  const { deadlines } = options;
  const monitor = new DependencyMonitor(options.probes, {
    intervalMs: deadlines?.dependencyCheckMs ?? 1000,
    metrics: options.metrics,
    logger: options.logger,
  });
  const routes: AnyRoute[] = [
    ...platformRoutes({
      metrics: options.metrics,
      monitor,
      metricsPublic: options.metricsPublic,
      ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
      // A process without API routes (worker-only) serves no OpenAPI document: nothing under /api.
      ...(options.routes.length ? { openapi: () => (openapi ??= JSON.stringify(buildOpenApi(routes, { title: 'worker-platform', version: '0.1.0' }))) } : {}),
    }),
    ...options.routes,
  ];
  const dispatch = dispatcher(routes, { authenticate, bodyLimit: options.bodyLimit, clientAddress: address });
  const context: MountContext = { requireAuth: (o) => requireAuth(authenticate, o), auth: options.auth, clientAddress: address };
  const mounts = (options.mounts ?? []).map((mount) => mount(context));
  const wrapper = new RequestWrapper({
    logger: options.logger,
    metrics: options.metrics,
    accessLog: options.accessLog,
    ...(deadlines ? { outageDeadlineMs: deadlines.outageMs, requestDeadlineMs: deadlines.requestMs, dependencyDown: () => monitor.down() } : {}),
  });
  if (deadlines) monitor.start();
  const serve = (ex: Exchange) => {
    if (dispatch(ex)) return;
    const mount = mounts.find((m) => mountServes(m, ex.pathname));
    if (mount) serveExpress(mount, ex);
    else ex.fail(new NotFoundError('not_found', `no route for ${ex.req.method} ${ex.pathname}`));
  };
  const { observe } = options;

  return {
    close: () => {
      monitor.stop();
      wrapper.close();
    },
    listener: (req, res) => {
      const ex = wrapper.begin(req, res);
      if (observe) observe(ex, () => serve(ex));
      else serve(ex);
    },
  };
}
