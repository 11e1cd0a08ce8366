/**
 * API tokens: HS256 JWTs signed with JWT_SECRET. Each carries a session id (`sid`) that the
 * logout blacklist refers to, so a logged-out token is refused until it would have expired.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors, jwtVerify } from 'jose';

export interface TokenClaims {
  userId: number;
  username: string;
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

  async issue(user: { id: number; username: string }, now = Date.now()): Promise<{ token: string; claims: TokenClaims }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + this.ttlSeconds;
    const sessionId = randomUUID();
    const token = await new SignJWT({ name: user.username, sid: sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, claims: { userId: user.id, username: user.username, sessionId, exp } };
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
      if (!Number.isInteger(userId) || typeof payload.sid !== 'string' || typeof payload.name !== 'string' || typeof payload.exp !== 'number') {
        throw new InvalidTokenError('invalid', 'token lacks required claims');
      }
      return { userId, username: payload.name, sessionId: payload.sid, exp: payload.exp };
    } catch (err) {
      if (err instanceof InvalidTokenError) throw err;
      if (err instanceof errors.JWTExpired) throw new InvalidTokenError('expired', 'token expired');
      throw new InvalidTokenError('invalid', 'token signature or format is invalid');
    }
  }
}
