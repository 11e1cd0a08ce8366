import { bool, int, setting, str } from './define.js';

/** Example values that production refuses (see assertProductionSafe). */
export const EXAMPLE_JWT_SECRET = 'dev-only-secret-change-me-0123456789abcdef';
export const EXAMPLE_ADMIN_PASSWORD = 'change-me';

/** Login, tokens and the logout blacklist (reference: message-cache-and-auth.md 2.2, 5.2). */
export const authSettings = {
  jwtSecret: setting('JWT_SECRET', str().min(32, 'must be at least 32 characters'), EXAMPLE_JWT_SECRET, 'HMAC secret that signs API tokens.', { secret: true }),
  tokenTtlSeconds: setting('JWT_TTL_SECONDS', int(60), 86400, 'Lifetime of an API token.'),
  adminUsername: setting('ADMIN_USERNAME', str().min(1), 'admin', 'Admin user created (or updated) at start.'),
  adminPassword: setting('ADMIN_PASSWORD', str().min(1), EXAMPLE_ADMIN_PASSWORD, 'Password of the admin user.', { secret: true }),
  failOpen: setting('AUTH_FAIL_OPEN', bool(), false, 'When Redis is down: false = refuse tokens (503, fail secure); true = accept them unchecked.'),
  loginMaxAttempts: setting('LOGIN_RATE_LIMIT_MAX', int(1), 10, 'Failed logins allowed per user and per IP within the window.'),
  loginWindowSeconds: setting('LOGIN_RATE_LIMIT_WINDOW_SECONDS', int(1), 900, 'Window of the login rate limit.'),
  cookieSecure: setting('AUTH_COOKIE_SECURE', bool(), false, 'Mark the Bull Board session cookie Secure (set behind HTTPS).'),
};
