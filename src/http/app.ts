/**
 * The HTTP side of the API role: request ids, access logs and request metrics, the declared
 * routes (their JSON bodies with a size limit) in front of an express app with health and
 * readiness, metrics, the OpenAPI document, extra mounts (Bull Board), 404 and the one error mapper.
 */
import { randomBytes } from 'node:crypto';
import type { RequestListener, ServerOptions } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import type { AuthService } from '../auth/auth-service.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { requireAuth, scrapeTokenOr } from './auth-middleware.js';
import { errorMapper, notFound } from './error-mapper.js';
import { buildOpenApi } from './openapi.js';
import { declaredRoutes, type AnyRoute } from './route.js';
import { expressRequest, expressServerClasses } from './express-objects.js';

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

/** Request ids of this process: a random prefix and a counter (unique enough to find a request in logs, and cheaper than a UUID). */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url');
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}

/**
 * What every request gets: its id (X-Request-Id, taken from the request when it carries a sane
 * one), and, once answered, the request metrics and the access log line. A function, so that the
 * declared routes can begin it themselves (route-table.ts) without an express layer of their own.
 */
function requestContext(options: AppOptions): (req: Request, res: Response) => void {
  const { logger, metrics, accessLog } = options;
  const nextId = requestIds();
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : nextId();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    res.on('finish', () => {
      // Declared routes leave their path (route-table.ts); express routes (health, Bull Board) have req.route.
      const route = (res.locals.route as string | undefined) ?? (req.route?.path ? (req.route.path === '/' && req.baseUrl ? req.baseUrl : `${req.baseUrl}${req.route.path}`) : 'unmatched');
      const seconds = (performance.now() - started) / 1000;
      metrics.http.record(req.method, route, res.statusCode, seconds);
      if (accessLog && logger.isLevelEnabled('info')) {
        logger.info({ reqId: id, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request');
      }
    });
  };
}

/** What the API's node:http server is created with (server.ts). */
export interface HttpApp {
  /** The declared routes (route-table.ts) in front of the express app, which serves everything else and maps the errors of both. */
  listener: RequestListener;
  /** Request and response classes that are the express app's from the start (express-objects.ts). */
  serverOptions: ServerOptions;
}

export function createApp(options: AppOptions): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  app.set('etag', false);
  const begin = requestContext(options);
  const mapError = errorMapper(options.logger);
  const authGuard = requireAuth(options.auth);
  const serveDeclared = declaredRoutes(
    options.routes,
    {
      requireAuth: authGuard,
      requireAuthDeferred: requireAuth(options.auth, { deferBlacklist: true }),
      parseJson: express.json({ limit: options.bodyLimit, type: ['application/json', 'application/*+json'] }),
    },
    {
      enter: (req, res) => {
        expressRequest(app, req, res);
        begin(req, res);
      },
      leave: (err, req, res) => (err === undefined ? app(req, res) : answerError(mapError, options.logger, err, req, res)),
    },
  );
  // Requests the route table does not serve begin their context here.
  app.use((req, res, next) => {
    if (res.locals.requestId === undefined) begin(req, res);
    next();
  });

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
  else app.get('/metrics', scrapeTokenOr(options.metricsToken, requireAuth(options.auth, { role: 'admin' })), metricsHandler);

  const openapi = buildOpenApi(options.routes, { title: 'worker-platform', version: '0.1.0' });
  app.get('/api/openapi.json', authGuard, (_req, res) => {
    res.json(openapi);
  });

  for (const mount of options.mounts ?? []) mount(app, { requireAuth, service: options.auth });

  app.use(notFound);
  app.use(mapError);
  return {
    listener: (req, res) => {
      if (!serveDeclared(req, res)) void app(req, res);
    },
    serverOptions: expressServerClasses(app),
  };
}

/** The error mapper outside express's router; should it fail itself, a bare 500 (or a cut connection once the headers are out). */
function answerError(mapError: ErrorRequestHandler, logger: Logger, err: unknown, req: Request, res: Response): void {
  const fail = (failure: unknown) => {
    logger.error({ err: failure, path: req.path }, 'the error mapper failed');
    if (res.headersSent) res.destroy();
    else res.status(500).end();
  };
  try {
    mapError(err, req, res, fail);
  } catch (failure) {
    fail(failure);
  }
}
