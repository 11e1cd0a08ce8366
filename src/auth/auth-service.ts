/**
 * Login, logout and password checks, orchestrated over the token service, the users table, the
 * login rate limit, the password threads, the logout blacklist and the credential states; a
 * request's credential check is credential-check.ts (reached through `verify` and `authenticate`).
 *
 * Invariants of a login (docs/security.md#logins): its attempt is counted per client address and
 * per (user name, address) before anything else (429 beyond either limit); the password is compared
 * on a password thread (429 `login_busy` when none is free in time), against a dummy hash when the
 * user does not exist; an unknown user, a wrong password and a disabled user all get the same 401
 * `invalid_credentials`; only a match of an enabled user takes its attempt back.
 */
import type { Counter } from 'prom-client';
import { DependencyDownError, InvalidInputError, RateLimitedError, UnauthenticatedError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import type { ApiKeyStore } from './api-key-store.js';
import { ApiKeyVerifier } from './api-key-verifier.js';
import { loginAddressKey } from './client-address.js';
import { CredentialCheck } from './credential-check.js';
import { CredentialStates, userState } from './credential-state.js';
import { LoginRateLimit } from './login-rate-limit.js';
import { PasswordChecksBusyError, PasswordHasher } from './password-hasher.js';
import { DUMMY_HASH } from './passwords.js';
import type { Principal, VerifiedToken } from './principal.js';
import type { Role } from './roles.js';
import { SessionBlacklist } from './session-blacklist.js';
import { TokenService } from './tokens.js';
import type { UserStore } from './user-store.js';

export interface AuthSettings {
  jwtSecret: string;
  tokenTtlSeconds: number;
  failOpen: boolean;
  loginMaxAttempts: number;
  loginAddressMaxAttempts: number;
  loginWindowSeconds: number;
  passwordThreads: number;
  passwordQueueMax: number;
  passwordWaitMs: number;
}

export class AuthService {
  readonly tokens: TokenService;
  readonly states: CredentialStates;
  private readonly blacklist: SessionBlacklist;
  private readonly rateLimit: LoginRateLimit;
  private readonly hasher: PasswordHasher;
  private readonly credentials: CredentialCheck;
  private readonly passwordChecks: Counter<'outcome'>;
  private readonly refusedAttempts: Counter<'reason'>;

  constructor(private readonly deps: { users: UserStore; apiKeys: ApiKeyStore; redis: RedisClient; keys: Keys; settings: AuthSettings; metrics: Metrics }) {
    const s = deps.settings;
    this.tokens = new TokenService(s.jwtSecret, s.tokenTtlSeconds);
    this.states = new CredentialStates(deps);
    this.blacklist = new SessionBlacklist(deps.redis, deps.keys);
    this.rateLimit = new LoginRateLimit(
      deps.redis,
      deps.keys,
      { addressMax: s.loginAddressMaxAttempts, pairMax: s.loginMaxAttempts, windowSeconds: s.loginWindowSeconds },
      s.failOpen,
    );
    this.hasher = new PasswordHasher({ threads: s.passwordThreads, queueMax: s.passwordQueueMax, waitMs: s.passwordWaitMs });
    this.credentials = new CredentialCheck({
      redis: deps.redis,
      keys: deps.keys,
      tokens: this.tokens,
      apiKeys: new ApiKeyVerifier(deps.apiKeys),
      states: this.states,
      failOpen: s.failOpen,
    });
    this.passwordChecks = deps.metrics.counter('wp_auth_password_checks_total', 'Password hashes compared (logins and password changes), by outcome.', [
      'outcome',
    ]);
    this.refusedAttempts = deps.metrics.counter(
      'wp_auth_login_refused_total',
      'Logins and password changes refused before their password check: rate_limited (per address or user name and address), busy (no password thread free in time).',
      ['reason'],
    );
  }

  /** Ends the password threads (the API role's stop). */
  close(): Promise<void> {
    return this.hasher.close();
  }

  /** A bcrypt hash of a new password, made on a password thread. */
  hashPassword(password: string): Promise<string> {
    return this.hasher.hash(password);
  }

  /** Runs a Redis step; an outage is 503 (fail secure) or `fallback` with AUTH_FAIL_OPEN. Other errors are thrown as they are. */
  private async redisStep<T>(op: () => Promise<T>, fallback: T, what: string): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!isRedisUnavailable(err)) throw err;
      if (this.deps.settings.failOpen) return fallback;
      throw new DependencyDownError('redis', `${what} while Redis is unavailable`, { cause: err });
    }
  }

  /**
   * Compares a password with a hash on a password thread (a dummy hash when the user does not
   * exist, so timing tells nothing); counted in wp_auth_password_checks_total. Throws
   * PasswordChecksBusyError (429) when no thread is free in time.
   */
  async checkPassword(password: string, hash: string | undefined): Promise<boolean> {
    const ok = await this.hasher.compare(password, hash ?? DUMMY_HASH);
    const matched = ok && hash !== undefined;
    this.passwordChecks.inc({ outcome: matched ? 'match' : 'mismatch' });
    return matched;
  }

  /**
   * A password check within the login rate limit: the attempt is counted first (atomically, per
   * client address and per user name and address), and only an attempt within the limits has its
   * password checked (429 otherwise). The user is returned when the password matches and `usable`
   * accepts it; only then is the attempt taken back (a disabled user's right password counts as a
   * failure, so the limit does not tell it apart either). Used by login and password change.
   */
  async checkPasswordLimited<U extends { passwordHash: string }>(
    username: string,
    password: string,
    ip: string | undefined,
    load: () => Promise<U | null>,
    usable: (user: U) => boolean = () => true,
  ): Promise<U | undefined> {
    const address = loginAddressKey(ip);
    const verdict = await this.rateLimit.count(username, address);
    if (!verdict.allowed) {
      this.refusedAttempts.inc({ reason: 'rate_limited' });
      const wait = verdict.retryAfterSeconds;
      throw new RateLimitedError('too_many_attempts', `too many failed attempts; try again in ${wait} s`, wait);
    }
    let matched: boolean;
    let user: U | null;
    try {
      user = await load();
      matched = await this.checkPassword(password, user?.passwordHash);
    } catch (err) {
      // No password was checked: the attempt is not the client's failure.
      if (err instanceof PasswordChecksBusyError) this.refusedAttempts.inc({ reason: 'busy' });
      await this.rateLimit.giveBack(username, address).catch(() => undefined);
      throw err;
    }
    if (!matched || !user || !usable(user)) return undefined;
    await this.rateLimit.giveBack(username, address);
    return user;
  }

  async login(username: string, password: string, ip: string | undefined): Promise<{ token: string; expiresAt: string; role: Role }> {
    const user = await this.checkPasswordLimited(
      username,
      password,
      ip,
      () => this.deps.users.findByName(username),
      (u) => !u.disabled,
    );
    // One answer for an unknown user, a wrong password and a disabled user: it never confirms a password.
    if (!user) throw new UnauthenticatedError('invalid_credentials', 'unknown user, wrong password or disabled user');
    // The state the token will be compared with, stored now so that requests need no database read.
    await this.redisStep(() => this.states.raise({ kind: 'user', id: user.id }, userState(user)), '', 'the login cannot be recorded');
    const { token, claims } = await this.tokens.issue(user);
    return { token, expiresAt: new Date(claims.exp * 1000).toISOString(), role: user.role };
  }

  /** Blacklists the token's session until the token would expire. */
  async logout(principal: Principal): Promise<void> {
    if (principal.kind !== 'token' || principal.exp === undefined) {
      throw new InvalidInputError('not_a_session', 'an API key is not a session; revoke it with DELETE /api/api-keys/:id');
    }
    try {
      await this.blacklist.add(principal.sessionId, principal.exp);
    } catch (err) {
      throw new DependencyDownError('redis', 'logout cannot be recorded while Redis is unavailable', { cause: err });
    }
  }

  /** The request's credential check (credential-check.ts): who it is, and that it is current (401, or 503 when Redis cannot tell). */
  verify(token: string, options: { deferBlacklist?: boolean } = {}): Promise<VerifiedToken> {
    return this.credentials.verify(token, options);
  }

  /** `verify` with `deferBlacklist` at once, for a credential this process verified before (see CredentialCheck). */
  verifyKnownDeferred(token: string): VerifiedToken | undefined {
    return this.credentials.verifyKnownDeferred(token);
  }

  /** Who a credential says it is, without checking that it is current. */
  authenticate(token: string): Promise<Principal> {
    return this.credentials.authenticate(token);
  }
}
