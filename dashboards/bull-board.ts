/**
 * Bull Board at /admin/queues over every registered queue, behind the platform's login.
 *
 * A person in a browser: /admin/queues without a session → redirect to /admin/login, a small
 * form that posts the username and password; on success the API token is set as an HttpOnly,
 * SameSite=Strict cookie scoped to /admin, and the board opens. The board's own API
 * (/admin/queues/api/...) accepts that cookie or a Bearer token; anonymous requests get 401.
 * /admin/logout blacklists the session exactly like POST /api/auth/logout.
 */
import express, { type Express, type Request, type Response } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { AuthService } from '../src/auth/auth-service.js';
import { HttpError } from '../src/errors.js';
import { cookieToken, requireAuth as requireAuthFactory, SESSION_COOKIE } from '../src/http/auth-middleware.js';

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
  queues: Queue[];
  cookieSecure: boolean;
}

/** Returns the mount used by the API app (see src/http/app.ts `mounts`). */
export function bullBoardMount(options: BullBoardOptions) {
  return (app: Express, auth: { requireAuth: typeof requireAuthFactory; service: AuthService }) => {
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(BOARD_PATH);
    createBullBoard({
      queues: options.queues.map((q) => new BullMQAdapter(q)),
      serverAdapter,
      options: { uiConfig: { boardTitle: 'worker-platform', miscLinks: [{ text: 'Sign out', url: LOGOUT_PATH }] } },
    });

    const cookie = (token: string, maxAgeSeconds: number) =>
      `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${options.cookieSecure ? '; Secure' : ''}`;

    app.get(LOGIN_PATH, (_req, res) => {
      res.type('html').send(loginPage());
    });
    app.post(LOGIN_PATH, express.urlencoded({ extended: false, limit: '4kb' }), async (req: Request, res: Response, next) => {
      try {
        const { username, password } = (req.body ?? {}) as { username?: string; password?: string };
        if (!username || !password) {
          res.status(400).type('html').send(loginPage('Enter a username and a password.'));
          return;
        }
        const { token, expiresAt } = await auth.service.login(username, password, req.ip ?? 'unknown');
        const maxAge = Math.max(1, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
        res.setHeader('Set-Cookie', cookie(token, maxAge));
        res.redirect(303, BOARD_PATH);
      } catch (err) {
        if (err instanceof HttpError && (err.status === 401 || err.status === 429)) {
          res.status(err.status).type('html').send(loginPage(err.message));
          return;
        }
        next(err);
      }
    });
    const logout = async (req: Request, res: Response) => {
      const token = cookieToken(req);
      if (token) {
        try {
          const claims = await auth.service.tokens.verify(token);
          await auth.service.logout(claims);
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
    const guard = auth.requireAuth(auth.service, { allowCookie: true });
    app.use(BOARD_PATH, (req, res, next) => {
      guard(req, res, (err?: unknown) => {
        if (!err) return next();
        const wantsHtml = req.method === 'GET' && !req.path.startsWith('/api/') && (req.headers.accept ?? '').includes('text/html');
        if (wantsHtml && err instanceof HttpError && err.status === 401) {
          res.redirect(303, LOGIN_PATH);
          return;
        }
        next(err);
      });
    });
    app.use(BOARD_PATH, serverAdapter.getRouter());
  };
}
