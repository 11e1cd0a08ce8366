/**
 * Login, logout and credential checks, orchestrated over the token service, API keys, the users
 * table, the login rate limit, the password threads, the logout blacklist and the credential states.
 *
 * A login: (1) its attempt is counted per client address and per (user name, address), atomically,
 * before anything else (429 beyond either limit: login-rate-limit.ts); (2) the user is read; (3) its
 * password is compared on a password thread, at most AUTH_PASSWORD_THREADS at once (429 `login_busy`
 * beyond the wait line: password-hasher.ts), against a dummy hash when the user does not exist;
 * (4) an unknown user, a wrong password and a disabled user all get the same 401
 * `invalid_credentials`, so the answer never confirms a password; only a match of an enabled user
 * takes its attempt back.
 *
 * A request's credential is current when its session is not logged out (blacklist) and the state
 * of its user (tokens) or key (API keys) in Redis is the one it carries (credential-state.ts):
 * one round trip for both, or none of its own on the hot routes, whose script makes the check
 * (src/revocation/revocation.ts). Only Redis outages count as Redis down; any other error is an error.
 */
import type { Counter } from 'prom-client';
import type { PrismaClient } from '../db/client.js';
import { DependencyDownError, InvalidInputError, RateLimitedError, UnauthenticatedError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { ApiKeyVerifier } from './api-key-verifier.js';
import { looksLikeApiKey } from './api-key-format.js';
import { loginAddressKey } from './client-address.js';
import { API_KEY_REVOKED, CredentialStates, MISSING, tokenState, userState, type CredentialRef } from './credential-state.js';
import { LoginRateLimit } from './login-rate-limit.js';
import { PasswordChecksBusyError, PasswordHasher } from './password-hasher.js';
import { DUMMY_HASH } from './passwords.js';
import { Revocation, TokenRevokedError } from '../revocation/revocation.js';
import type { Role } from './roles.js';
import { SessionBlacklist } from './session-blacklist.js';
import { InvalidTokenError, TokenService, type TokenClaims } from './tokens.js';

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

/** Who a request acts as, from its token or API key. */
export interface Principal {
  kind: 'token' | 'apiKey';
  userId: number;
  username: string;
  role: Role;
  /** The token's session id (the logout blacklist's key); `apikey-<id>` for an API key. */
  sessionId: string;
  /** Token expiry, seconds since the epoch; absent for API keys (they live until revoked). */
  exp?: number;
  /** Whose state decides whether the credential is current, and the state it must have. */
  credential: CredentialRef;
  expectedState: string;
}

export interface VerifiedToken extends Principal {
  /** False when Redis was down and AUTH_FAIL_OPEN let the token through without the blacklist, or when the check is left to the handler. */
  blacklistChecked: boolean;
  /** Present when the credential check is left to the request's own Redis script (see src/revocation/revocation.ts). */
  revocation?: Revocation;
}

export class AuthService {
  readonly tokens: TokenService;
  readonly states: CredentialStates;
  private readonly blacklist: SessionBlacklist;
  private readonly rateLimit: LoginRateLimit;
  private readonly hasher: PasswordHasher;
  private readonly apiKeys: ApiKeyVerifier;
  private readonly passwordChecks: Counter<'outcome'>;
  private readonly refusedAttempts: Counter<'reason'>;

  constructor(private readonly deps: { prisma: PrismaClient; redis: RedisClient; keys: Keys; settings: AuthSettings; metrics: Metrics }) {
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
    this.apiKeys = new ApiKeyVerifier(deps.prisma);
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
      () => this.deps.prisma.user.findUnique({ where: { username } }),
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

  /**
   * Verifies the credential: a token's signature and expiry, or an API key's secret; then that it
   * is current (not logged out, its user or key unchanged). Throws UnauthenticatedError (401) when not, and DependencyDownError (503)
   * when Redis is down and the platform fails secure.
   *
   * With `deferBlacklist` the currency check is not made here: the result carries a Revocation for
   * the handler's own Redis script (src/revocation/revocation.ts). On a Redis Cluster, where the blacklist and
   * state keys cannot share a script with the request's keys, the check is made here all the same.
   */
  async verify(token: string, options: { deferBlacklist?: boolean } = {}): Promise<VerifiedToken> {
    const principal = await this.authenticate(token);
    if (options.deferBlacklist && !this.deps.redis.isCluster) return this.deferred(principal);
    return { ...principal, blacklistChecked: await this.checkCurrent(principal) };
  }

  /**
   * `verify` with `deferBlacklist`, answered at once (no promise) for a credential this process has
   * verified before and that has not expired: the hot routes' usual case. Undefined when the full
   * `verify` is needed (new or expired token, Redis Cluster).
   */
  verifyKnownDeferred(token: string): VerifiedToken | undefined {
    if (this.deps.redis.isCluster) return undefined;
    const principal = this.known(token);
    return principal ? this.deferred(principal) : undefined;
  }

  private known(token: string): Principal | undefined {
    if (looksLikeApiKey(token)) return this.apiKeys.known(token);
    const claims = this.tokens.known(token);
    return claims ? this.principalOf(claims) : undefined;
  }

  /** The principal of verified claims, made once per claims object (the token service keeps one per token). */
  private readonly principals = new WeakMap<TokenClaims, Principal>();
  private principalOf(claims: TokenClaims): Principal {
    let principal = this.principals.get(claims);
    if (!principal) this.principals.set(claims, (principal = tokenPrincipal(claims)));
    return principal;
  }

  /** Who a credential says it is (signature and expiry, or the key's secret), without checking that it is current. */
  async authenticate(token: string): Promise<Principal> {
    if (looksLikeApiKey(token)) {
      const principal = await this.apiKeys.verify(token);
      if (!principal) throw new UnauthenticatedError('invalid_api_key', 'the API key is invalid or revoked');
      return principal;
    }
    try {
      return this.principalOf(await this.tokens.verify(token));
    } catch (err) {
      const reason = err instanceof InvalidTokenError ? err.reason : 'invalid';
      throw new UnauthenticatedError(
        reason === 'expired' ? 'token_expired' : 'invalid_token',
        reason === 'expired' ? 'the token has expired' : 'the token is invalid',
      );
    }
  }

  private deferred(principal: Principal): VerifiedToken {
    const revocation = new Revocation(
      this.deps.keys.blacklistedSession(principal.sessionId),
      this.states.key(principal.credential),
      principal.expectedState,
      async () => {
        await this.checkCurrent(principal);
      },
    );
    return { ...principal, blacklistChecked: false, revocation };
  }

  /**
   * Throws 401 when the session is logged out or the credential's state is not the one it
   * carries; 503 when Redis cannot tell (unless AUTH_FAIL_OPEN, which skips the blacklist and reads
   * the state from the database). Returns whether the blacklist was checked.
   */
  async checkCurrent(principal: Principal): Promise<boolean> {
    let listed: number;
    let state: string | undefined;
    try {
      [listed, state] = await Promise.all([
        this.deps.redis.exists(this.deps.keys.blacklistedSession(principal.sessionId)),
        this.states.cached(principal.credential),
      ]);
    } catch (err) {
      if (!isRedisUnavailable(err)) throw err;
      if (!this.deps.settings.failOpen) {
        throw new DependencyDownError('redis', 'the token cannot be checked while Redis is unavailable (AUTH_FAIL_OPEN=false)', { cause: err });
      }
      assertCurrent(principal, await this.states.fromDatabase(principal.credential));
      return false;
    }
    if (listed) throw new TokenRevokedError();
    assertCurrent(principal, state ?? (await this.states.fill(principal.credential)));
    return true;
  }
}

function tokenPrincipal(claims: TokenClaims): Principal {
  return {
    kind: 'token',
    userId: claims.userId,
    username: claims.username,
    role: claims.role,
    sessionId: claims.sessionId,
    exp: claims.exp,
    credential: { kind: 'user', id: claims.userId },
    expectedState: tokenState(claims),
  };
}

/** 401 unless `state` is the one the credential carries, with the reason as the code. */
export function assertCurrent(principal: Principal, state: string): void {
  if (state === principal.expectedState) return;
  if (principal.kind === 'apiKey') {
    throw new UnauthenticatedError('invalid_api_key', state === API_KEY_REVOKED ? 'the API key was revoked' : 'the API key is invalid or revoked');
  }
  if (state === MISSING) throw new UnauthenticatedError('unknown_user', "the token's user does not exist");
  if (state.endsWith(':disabled')) throw new UnauthenticatedError('user_disabled', "the token's user is disabled");
  if (versionOf(state) === versionOf(principal.expectedState)) {
    // The version the account has, with another role: the token was not issued by this platform as it is.
    throw new UnauthenticatedError('invalid_token', "the token's role is not its user's");
  }
  throw new UnauthenticatedError('token_revoked', 'the token was ended by a password or role change; log in again');
}

const versionOf = (state: string) => state.split(':', 1)[0];
