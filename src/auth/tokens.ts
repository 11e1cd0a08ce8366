/**
 * API tokens: HS256 JWTs signed with JWT_SECRET. Each carries a session id (`sid`) that the
 * logout blacklist refers to, so a logged-out token is refused until it would have expired, and
 * its user's role and token version (`ver`), which a password, role or disabled change raises,
 * ending every token issued before (credential-state.ts).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors, jwtVerify } from 'jose';
import { ROLES, type Role } from './roles.js';

export interface TokenClaims {
  userId: number;
  username: string;
  role: Role;
  /** The user's token version when the token was issued. */
  version: number;
  sessionId: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export class InvalidTokenError extends Error {
  constructor(
    readonly reason: 'expired' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

const ISSUER = 'worker-platform';
/**
 * Tokens verified already, by their exact text, until they expire. jose verifies through
 * WebCrypto, which in Node costs a few hundred µs a call (a thread-pool hop), more than the rest
 * of a small request; the claims of a token never change, so one verification per token and
 * process is enough. The blacklist is still checked on every request (auth-service.ts).
 */
const VERIFIED_CACHE_SIZE = 10_000;
const AUDIENCE = 'worker-platform-api';

export class TokenService {
  private readonly key: Uint8Array;
  private readonly verified = new Map<string, TokenClaims>();

  constructor(
    secret: string,
    private readonly ttlSeconds: number,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(user: { id: number; username: string; role: Role; tokenVersion: number }, now = Date.now()): Promise<{ token: string; claims: TokenClaims }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + this.ttlSeconds;
    const sessionId = randomUUID();
    const token = await new SignJWT({ name: user.username, sid: sessionId, role: user.role, ver: user.tokenVersion })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, claims: { userId: user.id, username: user.username, role: user.role, version: user.tokenVersion, sessionId, exp } };
  }

  /** The claims of a token this process verified already and that has not expired; undefined otherwise (use verify). */
  known(token: string, now = Date.now()): TokenClaims | undefined {
    const claims = this.verified.get(token);
    return claims && claims.exp * 1000 > now ? claims : undefined;
  }

  async verify(token: string, now = Date.now()): Promise<TokenClaims> {
    const known = this.verified.get(token);
    if (known) {
      if (known.exp * 1000 <= now) {
        this.verified.delete(token);
        throw new InvalidTokenError('expired', 'token expired');
      }
      return known;
    }
    const claims = await this.verifySignature(token);
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, claims);
    return claims;
  }

  private async verifySignature(token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      const userId = Number(payload.sub);
      const { sid, name, role, ver, exp } = payload;
      if (
        !Number.isInteger(userId) ||
        typeof sid !== 'string' ||
        typeof name !== 'string' ||
        typeof exp !== 'number' ||
        !(ROLES as readonly unknown[]).includes(role) ||
        !Number.isInteger(ver)
      ) {
        throw new InvalidTokenError('invalid', 'token lacks required claims');
      }
      return { userId, username: name, role: role as Role, version: ver as number, sessionId: sid, exp };
    } catch (err) {
      if (err instanceof InvalidTokenError) throw err;
      if (err instanceof errors.JWTExpired) throw new InvalidTokenError('expired', 'token expired');
      throw new InvalidTokenError('invalid', 'token signature or format is invalid');
    }
  }
}
