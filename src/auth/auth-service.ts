/**
 * Login, logout and token checks, orchestrated over the token service, the users table, the
 * login rate limit and the session blacklist.
 */
import type { PrismaClient } from '../db/client.js';
import { DependencyDownError, HttpError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { LoginRateLimit } from './login-rate-limit.js';
import { DUMMY_HASH, verifyPassword } from './passwords.js';
import { Revocation, TokenRevokedError } from './revocation.js';
import { SessionBlacklist } from './session-blacklist.js';
import { InvalidTokenError, TokenService, type TokenClaims } from './tokens.js';

export interface AuthSettings {
  jwtSecret: string;
  tokenTtlSeconds: number;
  failOpen: boolean;
  loginMaxAttempts: number;
  loginWindowSeconds: number;
}

export interface VerifiedToken extends TokenClaims {
  /** False when Redis was down and AUTH_FAIL_OPEN let the token through unchecked, or when the check is left to the handler. */
  blacklistChecked: boolean;
  /** Present when the blacklist check is left to the request's own Redis script (see revocation.ts). */
  revocation?: Revocation;
}

export class AuthService {
  readonly tokens: TokenService;
  private readonly blacklist: SessionBlacklist;
  private readonly rateLimit: LoginRateLimit;

  constructor(
    private readonly deps: { prisma: PrismaClient; redis: RedisClient; keys: Keys; settings: AuthSettings },
  ) {
    const s = deps.settings;
    this.tokens = new TokenService(s.jwtSecret, s.tokenTtlSeconds);
    this.blacklist = new SessionBlacklist(deps.redis, deps.keys);
    this.rateLimit = new LoginRateLimit(deps.redis, deps.keys, s.loginMaxAttempts, s.loginWindowSeconds);
  }

  private async guarded<T>(op: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (this.deps.settings.failOpen) return fallback;
      throw new DependencyDownError('redis', 'the login rate limit cannot be checked while Redis is unavailable', { cause: err });
    }
  }

  async login(username: string, password: string, ip: string): Promise<{ token: string; expiresAt: string }> {
    const wait = await this.guarded(() => this.rateLimit.retryAfter(username, ip), 0);
    if (wait > 0) {
      throw new HttpError(429, 'too_many_attempts', `too many failed logins; try again in ${wait} s`, undefined, { retryAfterSeconds: wait });
    }
    const user = await this.deps.prisma.user.findUnique({ where: { username } });
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) {
      await this.guarded(() => this.rateLimit.recordFailure(username, ip), undefined);
      throw new HttpError(401, 'invalid_credentials', 'unknown user or wrong password');
    }
    await this.guarded(() => this.rateLimit.recordSuccess(username), undefined);
    const { token, claims } = await this.tokens.issue(user);
    return { token, expiresAt: new Date(claims.exp * 1000).toISOString() };
  }

  /** Blacklists the token's session until the token would expire. */
  async logout(claims: TokenClaims): Promise<void> {
    try {
      await this.blacklist.add(claims.sessionId, claims.exp);
    } catch (err) {
      throw new DependencyDownError('redis', 'logout cannot be recorded while Redis is unavailable', { cause: err });
    }
  }

  /**
   * Verifies signature and expiry, then the blacklist. Throws HttpError 401 for a bad, expired
   * or logged-out token, and 503 when Redis is down and the platform fails secure.
   *
   * With `deferBlacklist` the blacklist is not read here: the result carries a Revocation for the
   * handler's own Redis script (revocation.ts). On a Redis Cluster, where the blacklist key cannot
   * share a script with the request's keys, the check is made here all the same.
   */
  async verify(token: string, options: { deferBlacklist?: boolean } = {}): Promise<VerifiedToken> {
    let claims: TokenClaims;
    try {
      claims = await this.tokens.verify(token);
    } catch (err) {
      const reason = err instanceof InvalidTokenError ? err.reason : 'invalid';
      throw new HttpError(401, reason === 'expired' ? 'token_expired' : 'invalid_token', reason === 'expired' ? 'the token has expired' : 'the token is invalid');
    }
    if (options.deferBlacklist && !this.deps.redis.isCluster) return this.deferred(claims);
    return { ...claims, blacklistChecked: await this.checkBlacklist(claims.sessionId) };
  }

  /**
   * `verify` with `deferBlacklist`, answered at once (no promise) for a token this process has
   * verified before and that has not expired: the hot routes' usual case. Undefined when the full
   * `verify` is needed (new or expired token, Redis Cluster).
   */
  verifyKnownDeferred(token: string): VerifiedToken | undefined {
    if (this.deps.redis.isCluster) return undefined;
    const claims = this.tokens.known(token);
    return claims ? this.deferred(claims) : undefined;
  }

  private deferred(claims: TokenClaims): VerifiedToken {
    const revocation = new Revocation(this.deps.keys.blacklistedSession(claims.sessionId), async () => {
      await this.checkBlacklist(claims.sessionId);
    });
    return { ...claims, blacklistChecked: false, revocation };
  }

  /** Throws 401 when the session is logged out, 503 when Redis cannot tell (unless AUTH_FAIL_OPEN); returns whether it was checked. */
  private async checkBlacklist(sessionId: string): Promise<boolean> {
    const state = await this.blacklist.check(sessionId);
    if (state === 'listed') throw new TokenRevokedError();
    if (state === 'unavailable') {
      if (!this.deps.settings.failOpen) {
        throw new DependencyDownError('redis', 'the token cannot be checked while Redis is unavailable (AUTH_FAIL_OPEN=false)');
      }
      return false;
    }
    return true;
  }
}
