import { describe, expect, it } from 'vitest';
import { InvalidTokenError, TokenService } from './tokens.js';

const SECRET = 'unit-test-secret-0123456789abcdef-0123456789';

describe('TokenService', () => {
  it('verifies its own tokens, again from the cache, and refuses one that expired since', async () => {
    const tokens = new TokenService(SECRET, 60);
    const { token, claims } = await tokens.issue({ id: 7, username: 'ann', role: 'user', tokenVersion: 3 });
    expect(await tokens.verify(token)).toEqual(claims);
    expect(claims).toMatchObject({ userId: 7, username: 'ann', role: 'user', version: 3 });
    expect(await tokens.verify(token)).toEqual(claims);
    await expect(tokens.verify(token, (claims.exp + 1) * 1000)).rejects.toMatchObject({ reason: 'expired' });
  });

  it('knows a token at once only after verifying it, and not once it expired', async () => {
    const tokens = new TokenService(SECRET, 60);
    const { token, claims } = await tokens.issue({ id: 7, username: 'ann', role: 'user', tokenVersion: 3 });
    expect(tokens.known(token)).toBeUndefined();
    await tokens.verify(token);
    expect(tokens.known(token)).toEqual(claims);
    expect(tokens.known(token, (claims.exp + 1) * 1000)).toBeUndefined();
    const [h, p, s] = token.split('.');
    expect(tokens.known(`${h}.${p}.${s!.slice(0, -2)}xx`)).toBeUndefined();
  });

  it('refuses a token with a changed payload or signature even when the original was verified', async () => {
    const tokens = new TokenService(SECRET, 60);
    const { token } = await tokens.issue({ id: 7, username: 'ann', role: 'user', tokenVersion: 3 });
    await tokens.verify(token);
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: '1' })).toString('base64url')}.${s}`;
    await expect(tokens.verify(forged)).rejects.toBeInstanceOf(InvalidTokenError);
    await expect(tokens.verify(`${h}.${p}.${s!.slice(0, -2)}xx`)).rejects.toMatchObject({ reason: 'invalid' });
    const other = new TokenService('another-secret-0123456789abcdef-0123456789', 60);
    await expect(other.verify(token)).rejects.toMatchObject({ reason: 'invalid' });
  });

  it('refuses a token issued with a lifetime that is already over', async () => {
    const tokens = new TokenService(SECRET, 1);
    const { token } = await tokens.issue({ id: 7, username: 'ann', role: 'user', tokenVersion: 3 }, Date.now() - 5000);
    await expect(tokens.verify(token)).rejects.toMatchObject({ reason: 'expired' });
  });

  it('refuses a token without a role or a token version (issued before they existed)', async () => {
    const tokens = new TokenService(SECRET, 60);
    const { token } = await tokens.issue({ id: 7, username: 'ann', role: 'user', tokenVersion: 3 });
    const [h, p] = token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const { SignJWT } = await import('jose');
    for (const drop of ['role', 'ver']) {
      const rest = Object.fromEntries(Object.entries(payload).filter(([k]) => k !== drop && !['sub', 'iss', 'aud', 'iat', 'exp'].includes(k)));
      const old = await new SignJWT(rest)
        .setProtectedHeader(JSON.parse(Buffer.from(h!, 'base64url').toString()))
        .setSubject('7')
        .setIssuer('worker-platform')
        .setAudience('worker-platform-api')
        .setIssuedAt()
        .setExpirationTime('1m')
        .sign(new TextEncoder().encode(SECRET));
      await expect(tokens.verify(old), drop).rejects.toMatchObject({ reason: 'invalid' });
    }
  });
});
