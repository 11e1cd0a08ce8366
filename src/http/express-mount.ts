/**
 * Express beside the dispatcher, where it is simpler: Bull Board (@bull-board/express) with its
 * login form. A mount owns every request under its path prefix that no declared route took;
 * express serves it with its own request and response objects, and the request wrapper still
 * gives it its id and security headers, records it when it finishes, and maps the errors express
 * passes on (or answers 404 for a path express has no route for).
 */
import type { IncomingMessage } from 'node:http';
import express, { type Express, type Request, type RequestHandler } from 'express';
import type { AuthService } from '../auth/auth-service.js';
import { NotFoundError } from '../errors.js';
import type { Authenticate, AuthenticateOptions } from './authenticate.js';
import type { Exchange } from './request-wrapper.js';

export interface ExpressMount {
  /** The first path segment it serves (`/admin`), compared ignoring case. */
  prefix: string;
  app: Express;
}

/** What a mount is built with. */
export interface MountContext {
  /** Express middleware requiring a credential (authenticate.ts); sets res.locals.auth. */
  requireAuth(options?: AuthenticateOptions): RequestHandler;
  auth: AuthService;
  /** The client's address of a request, as the declared routes see it (HTTP_TRUST_PROXY). */
  clientAddress(req: IncomingMessage): string | undefined;
}

/** An express app as mounts use it: no X-Powered-By. */
export function expressApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  return app;
}

/** The express adapter of authenticate(): sets res.locals.auth, or passes the error (401, 503) on. */
export function requireAuth(authenticate: Authenticate, options: AuthenticateOptions = {}): RequestHandler {
  return (req, res, next) => {
    try {
      const verified = authenticate(req.headers, options);
      if (!(verified instanceof Promise)) {
        res.locals.auth = verified;
        return next();
      }
      verified.then((info) => {
        res.locals.auth = info;
        next();
      }, next);
    } catch (err) {
      next(err);
    }
  };
}

export function mountServes(mount: ExpressMount, pathname: string): boolean {
  const prefix = mount.prefix;
  if (pathname.length < prefix.length) return false;
  const head = pathname.slice(0, prefix.length).toLowerCase();
  return head === prefix && (pathname.length === prefix.length || pathname[prefix.length] === '/');
}

/** Express's route of a finished request (`/admin/queues/api/queues`), for the metrics. */
function routeLabel(req: Request): string {
  const path = req.route?.path as string | undefined;
  if (!path) return 'unmatched';
  return path === '/' && req.baseUrl ? req.baseUrl : `${req.baseUrl}${path}`;
}

export function serveExpress(mount: ExpressMount, ex: Exchange): void {
  const req = ex.req as Request;
  ex.recordOnFinish(() => routeLabel(req));
  // An express app is a (req, res, next) function; `next` is where express leaves a request it did not answer.
  const handle = mount.app as unknown as (req: IncomingMessage, res: unknown, next: (err?: unknown) => void) => void;
  handle(ex.req, ex.res, (err?: unknown) => ex.fail(err ?? new NotFoundError('not_found', `no route for ${ex.req.method} ${ex.pathname}`)));
}
