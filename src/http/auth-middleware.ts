import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { AuthService } from '../auth/auth-service.js';
import { roleAllows, type Role } from '../auth/roles.js';
import { HttpError } from '../errors.js';
import type { AuthInfo } from './route.js';

export const SESSION_COOKIE = 'wp_session';

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

export function cookieToken(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

/**
 * Requires a valid, current credential (token or API key), and with `role` that role (403
 * otherwise); sets res.locals.auth. API routes take the
 * token from `Authorization: Bearer`; with `allowCookie` (Bull Board only) the session cookie
 * set by the board's login page is accepted too. With `deferBlacklist` the logout blacklist is
 * left to the route's handler (res.locals.auth.revocation, see src/auth/revocation.ts).
 */
export function requireAuth(auth: AuthService, options: { allowCookie?: boolean; deferBlacklist?: boolean; role?: Role } = {}): RequestHandler {
  const deferBlacklist = options.deferBlacklist === true;
  const verifyOptions = { deferBlacklist };
  return async (req, res, next) => {
    try {
      const token = bearerToken(req) ?? (options.allowCookie ? cookieToken(req) : undefined);
      if (!token) throw new HttpError(401, 'unauthenticated', 'an Authorization: Bearer <token> header is required');
      // A token verified before needs no await on the hot routes (the blacklist is their script's).
      const known = deferBlacklist ? auth.verifyKnownDeferred(token) : undefined;
      const info: AuthInfo = known ?? (await auth.verify(token, verifyOptions));
      if (options.role && !roleAllows(info.role, options.role)) throw new HttpError(403, 'forbidden', `this is for the ${options.role} role`);
      res.locals.auth = info;
      next();
    } catch (err) {
      next(err);
    }
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * /metrics for Prometheus: `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time),
 * else whatever `fallback` accepts (an admin's token).
 */
export function scrapeTokenOr(scrapeToken: string | undefined, fallback: RequestHandler): RequestHandler {
  if (!scrapeToken) return fallback;
  const expected = digest(scrapeToken);
  return (req, res, next) => {
    const token = bearerToken(req);
    if (token && timingSafeEqual(digest(token), expected)) return next();
    return fallback(req, res, next);
  };
}
