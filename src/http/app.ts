/**
 * The express app of the API role: request ids, access logs and request metrics, the declared
 * routes (their JSON bodies with a size limit), health and readiness, metrics, the OpenAPI
 * document, extra mounts (Bull Board), 404 and the one error mapper.
 */
import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import type { AuthService } from '../auth/auth-service.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { requireAuth, scrapeTokenOr } from './auth-middleware.js';
import { errorMapper, notFound } from './error-mapper.js';
import { buildOpenApi } from './openapi.js';
import { mountRoutes, type AnyRoute } from './route.js';

export interface DependencyProbe {
  name: string;
  /** Resolves true when the dependency answers. */
  check(): Promise<boolean>;
}

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
  auth: AuthService;
  routes: AnyRoute[];
  probes: DependencyProbe[];
  bodyLimit: string;
  trustProxy: boolean;
  metricsPublic: boolean;
  /** A static bearer token for Prometheus scrapes of /metrics (a user token works too). */
  metricsToken?: string;
  accessLog: boolean;
  /** Extra mounts (Bull Board), given the auth middleware factory. */
  mounts?: ((app: Express, auth: { requireAuth: typeof requireAuth; service: AuthService }) => void)[];
}

const PROBE_TIMEOUT_MS = 2000;

async function probe(p: DependencyProbe): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([p.check().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function requestContext(options: AppOptions): RequestHandler {
  const { logger, metrics, accessLog } = options;
  // The labelled children by method, route and status (a bounded set: declared paths or
  // 'unmatched'), so a request does not hash its labels again.
  const observers = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
  const observerOf = (method: string, route: string, status: string) => {
    const key = `${method} ${route} ${status}`;
    let o = observers.get(key);
    if (!o) {
      const counted = metrics.httpRequests.labels(method, route, status);
      const timed = metrics.httpDuration.labels(method, route);
      o = { count: () => counted.inc(), observe: (seconds) => timed.observe(seconds) };
      observers.set(key, o);
    }
    return o;
  };
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    res.on('finish', () => {
      // Declared routes leave their path (route-table.ts); the few express routes have req.route.
      const route = (res.locals.route as string | undefined) ?? (req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched');
      const seconds = (performance.now() - started) / 1000;
      const o = observerOf(req.method, route, String(res.statusCode));
      o.count();
      o.observe(seconds);
      if (accessLog && logger.isLevelEnabled('info')) {
        logger.info({ reqId: id, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request');
      }
    });
    next();
  };
}

export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  app.set('etag', false);
  app.use(requestContext(options));
  // The declared routes first: the hot ones meet no other layer (route-table.ts).
  const authGuard = requireAuth(options.auth);
  app.use(
    mountRoutes(options.routes, {
      requireAuth: authGuard,
      requireAuthDeferred: requireAuth(options.auth, { deferBlacklist: true }),
      parseJson: express.json({ limit: options.bodyLimit, type: ['application/json', 'application/*+json'] }),
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(options.probes.map(async (p) => [p.name, await probe(p)] as const));
    for (const [name, up] of results) options.metrics.dependencyUp.set({ dependency: name }, up ? 1 : 0);
    const down = results.filter(([, up]) => !up).map(([name]) => name);
    const dependencies = Object.fromEntries(results.map(([name, up]) => [name, up ? 'up' : 'down']));
    if (down.length) {
      res.status(503).json({ error: { code: 'not_ready', message: `unavailable: ${down.join(', ')}`, field: down[0] }, dependencies });
    } else {
      res.json({ status: 'ready', dependencies });
    }
  });

  const metricsHandler: RequestHandler = async (_req, res, next) => {
    try {
      const { contentType, body } = await options.metrics.render();
      res.setHeader('Content-Type', contentType);
      res.send(body);
    } catch (err) {
      next(err);
    }
  };
  if (options.metricsPublic) app.get('/metrics', metricsHandler);
  else app.get('/metrics', scrapeTokenOr(options.metricsToken, authGuard), metricsHandler);

  const openapi = buildOpenApi(options.routes, { title: 'worker-platform', version: '0.1.0' });
  app.get('/api/openapi.json', authGuard, (_req, res) => {
    res.json(openapi);
  });


  for (const mount of options.mounts ?? []) mount(app, { requireAuth, service: options.auth });

  app.use(notFound);
  app.use(errorMapper(options.logger));
  return app;
}
