/**
 * The credential check of a request, from its headers only (no framework): the dispatcher calls
 * it for every non-public route, and the express adapter (express-mount.ts) for Bull Board.
 *
 * The credential is `Authorization: Bearer <token or API key>`; with `allowCookie` (Bull Board
 * only) also the session cookie its login page sets. With `deferRevocation` (the hot routes) the
 * logout blacklist and credential state are left to the handler's own Redis script
 * (AuthInfo.revocation, src/revocation/revocation.ts), and a credential this process has verified
 * before is answered without a promise. A header value that is not UTF-8 is refused first (400
 * naming the header, json-body.ts), so no route reads one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthService } from '../auth/auth-service.js';
import { UnauthenticatedError } from '../errors.js';
import { checkHeaderText } from './json-body.js';
import type { AuthInfo } from './route.js';

export const SESSION_COOKIE = 'wp_session';

export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  return /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
}

export function cookieToken(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) {
      try {
        return decodeURIComponent(rest.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export interface AuthenticateOptions {
  allowCookie?: boolean;
  deferRevocation?: boolean;
}

/** The caller of a request, or a throw/rejection: UnauthenticatedError (401), DependencyDownError (503, Redis down and AUTH_FAIL_OPEN=false). */
export type Authenticate = (headers: IncomingHttpHeaders, options?: AuthenticateOptions) => AuthInfo | Promise<AuthInfo>;

export function authenticator(auth: AuthService): Authenticate {
  return (headers, options = {}) => {
    checkHeaderText(headers);
    const token = bearerToken(headers.authorization) ?? (options.allowCookie ? cookieToken(headers.cookie) : undefined);
    if (!token) throw new UnauthenticatedError('unauthenticated', 'an Authorization: Bearer <token> header is required');
    if (options.deferRevocation) return auth.verifyKnownDeferred(token) ?? auth.verify(token, { deferBlacklist: true });
    return auth.verify(token);
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <token>` compared with a static token in constant time (the Prometheus scrape token of /metrics). */
export function staticToken(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const given = bearerToken(authorization);
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
}
