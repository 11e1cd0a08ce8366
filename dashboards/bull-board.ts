/**
 * Bull Board at /admin/queues over every registered queue, behind the platform's login.
 *
 * A person in a browser: /admin/queues without a session → redirect to /admin/login, a small
 * form that posts the username and password; on success the API token is set as an HttpOnly,
 * SameSite=Strict cookie scoped to /admin, and the board opens. The board's own API
 * (/admin/queues/api/...) accepts that cookie or a Bearer token; anonymous requests get 401.
 * The board is for admins only: another role's login is refused on the form (403, no cookie) and
 * its token is refused by the board (403). /admin/logout blacklists the session exactly like
 * POST /api/auth/logout.
 *
 * It is an express app mounted beside the API's dispatcher for every path under /admin
 * (src/http/express-mount.ts); the request wrapper gives its answers their request id and
 * security headers and maps the errors it passes on (JSON 401/403/500, 503 for an outage).
 *
 * The board keeps the platform's rules: its buttons that change jobs are answered by the platform
 * first (board-actions.ts: the job console's chain replays, the board's rules in board-rules.ts),
 * and each queue is shown through board-queue-adapter.ts (payload schema, a crawl's flow from the
 * crawl's own page). Its Workers panel names the processes serving a queue (`<role>@<instance>`,
 * src/queues/create-worker.ts) and its graphs read BullMQ's per-minute worker metrics.
 */
import express, { type Request, type Response } from 'express';
import { createBullBoard } from '@bull-board/api';
import { errorHandler as boardErrorHandler } from '@bull-board/api/dist/handlers/error.js';
import { ExpressAdapter } from '@bull-board/express';
import { roleAllows } from '../src/auth/roles.js';
import { dependencyDown } from '../src/lib/dependency-down.js';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '../src/errors.js';
import { cookieToken, SESSION_COOKIE } from '../src/http/authenticate.js';
import { expressApp, type ExpressMount, type MountContext } from '../src/http/express-mount.js';
import { findTextProblem } from '../src/http/input-checks.js';
import type { AuthInfo } from '../src/http/route.js';
import type { JobInspector } from '../src/queues/job-inspector.js';
import type { QueueRegistry } from '../src/queues/registry.js';
import { boardActions } from './board-actions.js';
import { PlatformQueueAdapter } from './board-queue-adapter.js';

export const BOARD_PATH = '/admin/queues';
const LOGIN_PATH = '/admin/login';
const LOGOUT_PATH = '/admin/logout';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function loginPage(error?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · worker-platform</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;display:flex;align-items:center;justify-content:center;height:100vh;margin:0}
form{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);width:18rem}
h1{font-size:1.2rem;margin:0 0 1rem}label{display:block;margin:.6rem 0 .2rem;font-size:.9rem}
input{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #ccc;border-radius:4px}
button{margin-top:1rem;width:100%;padding:.6rem;border:0;border-radius:4px;background:#2b6cb0;color:#fff;font-size:1rem;cursor:pointer}
.error{color:#b00020;font-size:.9rem;margin:.5rem 0 0}
</style></head>
<body><form method="post" action="${LOGIN_PATH}">
<h1>Bull Board · sign in</h1>
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button id="sign-in" type="submit">Sign in</button>
${error ? `<p class="error" id="login-error">${escapeHtml(error)}</p>` : ''}
</form></body></html>`;
}

export interface BullBoardOptions {
  /** Every queue of the layout is shown (partitions and older layouts included). */
  queues: QueueRegistry;
  /** The job console the REST routes use, wired with the chains' handlers (src/runtime/api-wiring.ts). */
  jobs: JobInspector;
  cookieSecure: boolean;
  /** Largest JSON body of the board's actions (HTTP_BODY_LIMIT). */
  bodyLimit: number;
}

/** The mount of the API app (src/http/app.ts `mounts`): everything under /admin. */
export function bullBoardMount(options: BullBoardOptions): (context: MountContext) => ExpressMount {
  return ({ requireAuth, auth, clientAddress }) => {
    const app = expressApp();
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(BOARD_PATH);
    createBullBoard({
      queues: options.queues.all().map((q) => new PlatformQueueAdapter(q, options.queues.targetOf(q).key)),
      serverAdapter,
      options: { uiConfig: { boardTitle: 'worker-platform', miscLinks: [{ text: 'Sign out', url: LOGOUT_PATH }] } },
    });
    // A Redis (or database) outage is the platform's 503 naming it, with Retry-After, not the
    // board's 500: thrown on from the board's error handler, such an error reaches the mount's
    // error mapping (src/http/error-reply.ts).
    serverAdapter.setErrorHandler((err) => {
      if (dependencyDown(err)) throw err;
      return boardErrorHandler(err);
    });

    const cookie = (token: string, maxAgeSeconds: number) =>
      `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${options.cookieSecure ? '; Secure' : ''}`;

    app.get(LOGIN_PATH, (_req, res) => {
      res.type('html').send(loginPage());
    });
    app.post(LOGIN_PATH, express.urlencoded({ extended: false, limit: '4kb' }), async (req: Request, res: Response, next) => {
      try {
        const form = (req.body ?? {}) as Record<string, unknown>;
        const { username, password } = form;
        // One string each (a field given twice arrives as an array), of a sane length and storable text.
        const valid = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max && !findTextProblem(v);
        if (!valid(username, 64) || !valid(password, 1024)) {
          res.status(400).type('html').send(loginPage('Enter one username and one password.'));
          return;
        }
        const { token, expiresAt, role } = await auth.login(username, password, clientAddress(req));
        if (!roleAllows(role, 'admin')) {
          res.status(403).type('html').send(loginPage('Bull Board is for admins.'));
          return;
        }
        const maxAge = Math.max(1, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
        res.setHeader('Set-Cookie', cookie(token, maxAge));
        res.redirect(303, BOARD_PATH);
      } catch (err) {
        if (err instanceof UnauthenticatedError || err instanceof RateLimitedError) {
          res
            .status(err instanceof RateLimitedError ? 429 : 401)
            .type('html')
            .send(loginPage(err.message));
          return;
        }
        next(err);
      }
    });
    const logout = async (req: Request, res: Response) => {
      const token = cookieToken(req.headers.cookie);
      if (token) {
        try {
          await auth.logout(await auth.authenticate(token));
        } catch {
          /* an invalid or expired token needs no blacklisting */
        }
      }
      res.setHeader('Set-Cookie', cookie('', 0));
      res.redirect(303, LOGIN_PATH);
    };
    app.get(LOGOUT_PATH, logout);
    app.post(LOGOUT_PATH, logout);

    // Browsers asking for the board's pages are sent to the login page; API calls get 401 JSON.
    const guard = requireAuth({ allowCookie: true });
    app.use(BOARD_PATH, (req, res, next) => {
      guard(req, res, (err?: unknown) => {
        if (!err && !roleAllows((res.locals.auth as AuthInfo).role, 'admin')) {
          err = new ForbiddenError('forbidden', 'Bull Board is for admins');
        }
        if (!err) return next();
        const wantsHtml = req.method === 'GET' && !req.path.startsWith('/api/') && (req.headers.accept ?? '').includes('text/html');
        if (wantsHtml && err instanceof UnauthenticatedError) {
          res.redirect(303, LOGIN_PATH);
          return;
        }
        next(err);
      });
    });
    app.use(BOARD_PATH, boardActions({ jobs: options.jobs, queues: options.queues, bodyLimit: options.bodyLimit }));
    app.use(BOARD_PATH, serverAdapter.getRouter());
    return { prefix: '/admin', app };
  };
}
