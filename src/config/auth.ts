import { bool, int, setting, str } from './define.js';

/** Example values that production refuses (see assertProductionSafe). */
export const EXAMPLE_JWT_SECRET = 'dev-only-secret-change-me-0123456789abcdef';
export const EXAMPLE_ADMIN_PASSWORD = 'change-me';

/** Login, tokens and the logout blacklist (reference: message-cache-and-auth.md 2.2, 5.2). */
export const authSettings = {
  jwtSecret: setting(
    'JWT_SECRET',
    str().min(32, 'must be at least 32 characters'),
    EXAMPLE_JWT_SECRET,
    'HMAC secret that signs API tokens (production: at least 32 random-looking bytes, e.g. openssl rand -base64 48).',
    { secret: true },
  ),
  tokenTtlSeconds: setting('JWT_TTL_SECONDS', int(60), 86400, 'Lifetime of an API token.'),
  adminUsername: setting('ADMIN_USERNAME', str().min(1).max(64), 'admin', 'Admin user created (or made an enabled admin with this password) at start.'),
  adminPassword: setting(
    'ADMIN_PASSWORD',
    str().min(1).max(72),
    EXAMPLE_ADMIN_PASSWORD,
    'Password of the admin user (production: at least 12 characters; any account still holding the example password is disabled at start).',
    { secret: true },
  ),
  failOpen: setting(
    'AUTH_FAIL_OPEN',
    bool(),
    false,
    'When Redis is down: false = refuse tokens and logins (503, fail secure); true = accept tokens unchecked, and count login attempts in each process instead.',
  ),
  loginMaxAttempts: setting(
    'LOGIN_RATE_LIMIT_MAX',
    int(1),
    10,
    'Failed logins (password checks) allowed per (user name, client address) within the window; failures from one address never lock out another.',
  ),
  loginAddressMaxAttempts: setting(
    'LOGIN_RATE_LIMIT_ADDRESS_MAX',
    int(1),
    30,
    'Failed logins (password checks) allowed per client address within the window, whatever the user names, unknown ones included.',
  ),
  loginWindowSeconds: setting('LOGIN_RATE_LIMIT_WINDOW_SECONDS', int(1), 900, 'Window of the login rate limits.'),
  passwordThreads: setting(
    'AUTH_PASSWORD_THREADS',
    int(1, 64),
    2,
    'Worker threads that hash and compare passwords (bcrypt), beside the event loop: at most this many password checks run at once.',
  ),
  passwordQueueMax: setting(
    'AUTH_PASSWORD_QUEUE_MAX',
    int(0, 10_000),
    32,
    'Password checks that may wait for a free thread; more at once get 429 `login_busy` with Retry-After.',
  ),
  passwordWaitMs: setting('AUTH_PASSWORD_WAIT_MS', int(0, 60_000), 2000, 'Longest wait of a password check for a free thread before 429 `login_busy`.'),
  cookieSecure: setting('AUTH_COOKIE_SECURE', bool(), false, 'Mark the Bull Board session cookie Secure (set behind HTTPS).'),
};
