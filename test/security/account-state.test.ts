/**
 * Issue 26: what a token may do comes from its account, not from the token alone.
 *
 * - A token signed with the development secret (the default JWT_SECRET) claiming `role: admin`
 *   for an ordinary user's id and current token version reached the admin routes: the role was
 *   trusted as signed. Now the account's current role is part of the state every request compares
 *   with its token (the same Redis read as the token version, or the hot routes' own script), so
 *   such a token is refused everywhere, and nothing is done for it.
 * - A disabled user's right password answered 401 `user_disabled` and a wrong one
 *   `invalid_credentials`, which confirmed the password. Now both answer the same.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_JWT_SECRET } from '../../src/config/auth.js';
import { createUser } from '../support/accounts.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

/** A token as the platform signs them, with the claims chosen by whoever knows the secret. */
async function forge(secret: string, claims: { sub: number; name: string; role: string; ver: number }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ name: claims.name, sid: randomUUID(), role: claims.role, ver: claims.ver })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.sub))
    .setIssuer('worker-platform')
    .setAudience('worker-platform-api')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(secret));
}

describe('the account decides, not the token', () => {
  let t: TestPlatform;
  let user: ApiClient;
  let userId: number;

  beforeAll(async () => {
    // The development default secret, as a platform started without JWT_SECRET has it.
    t = await startTestPlatform({ roles: ['api'], env: { JWT_SECRET: EXAMPLE_JWT_SECRET } });
    user = await createUser(t, 'uma');
    userId = (await t.platform.ctx.db.prisma.user.findUniqueOrThrow({ where: { username: 'uma' } })).id;
    expect((await t.api.post('/api/pools/titles/9/items', { items: [{ text: 'one', batchId: 1 }] })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  it("refuses a token claiming admin for a user's id and current version, on admin, plain and hot routes, and does nothing for it", async () => {
    const { tokenVersion } = await t.platform.ctx.db.prisma.user.findUniqueOrThrow({ where: { id: userId } });
    const forged = t.api.withToken(await forge(EXAMPLE_JWT_SECRET, { sub: userId, name: 'uma', role: 'admin', ver: tokenVersion }));
    const users = await t.platform.ctx.db.prisma.user.count();
    for (const [method, path, body] of [
      ['GET', '/api/users'],
      ['GET', '/api/queues'],
      ['POST', '/api/users', { username: 'mallory', password: 'mallory-password', role: 'admin' }],
      ['GET', '/api/feeds'],
      ['POST', '/api/pools/titles/9/pop'],
    ] as const) {
      const res = await forged.request(method, path, body);
      expect(res.status, path).toBe(401);
      expect(res.body.error.code, path).toBe('invalid_token');
    }
    expect(await t.platform.ctx.db.prisma.user.count()).toBe(users);
    // The user's own token, with the role the account has, still works, and the one row is still there.
    expect((await user.get('/api/feeds')).status).toBe(200);
    expect((await user.post('/api/pools/titles/9/pop')).body).toMatchObject({ text: 'one' });
    expect((await user.get('/api/users')).status).toBe(403);
  });

  it("gives a disabled user's right password the answer a wrong one gets", async () => {
    const dora = await createUser(t, 'dora');
    const doraId = (await t.platform.ctx.db.prisma.user.findUniqueOrThrow({ where: { username: 'dora' } })).id;
    expect((await dora.get('/api/feeds')).status).toBe(200);
    expect((await t.api.patch(`/api/users/${doraId}`, { disabled: true })).status).toBe(200);
    const anon = t.api.withToken(undefined);
    const right = await anon.post('/api/auth/login', { username: 'dora', password: 'pw-dora-0123' }, { 'x-forwarded-for': '198.51.100.1' });
    const wrong = await anon.post('/api/auth/login', { username: 'dora', password: 'not-her-password' }, { 'x-forwarded-for': '198.51.100.1' });
    const unknown = await anon.post('/api/auth/login', { username: 'nobody-at-all', password: 'pw-dora-0123' });
    for (const res of [right, wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(wrong.body);
    }
    expect(wrong.body.error.code).toBe('invalid_credentials');
  });
});
