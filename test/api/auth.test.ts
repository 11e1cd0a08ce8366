/**
 * Invariant 6 and the auth contract: every route but login and health needs a valid,
 * unexpired, not logged-out token; the blacklist fails secure when Redis is down unless
 * AUTH_FAIL_OPEN=true; failed logins are rate limited.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN, TEST_JWT_SECRET } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

async function forgeToken(secret: string, claims: { exp: number; sid?: string }): Promise<string> {
  return new SignJWT({ name: 'admin', sid: claims.sid ?? 'forged-session' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('1')
    .setIssuer('worker-platform')
    .setAudience('worker-platform-api')
    .setIssuedAt(claims.exp - 3600)
    .setExpirationTime(claims.exp)
    .sign(new TextEncoder().encode(secret));
}

describe('auth', () => {
  let t: TestPlatform;
  let anon: ApiClient;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { LOGIN_RATE_LIMIT_MAX: '3' } });
    anon = t.api.withToken(undefined);
  });
  afterAll(() => t?.stop());

  it('serves health, readiness and login without a token', async () => {
    expect((await anon.get('/healthz')).status).toBe(200);
    const ready = await anon.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.dependencies).toEqual({ redis: 'up', database: 'up' });
    const login = await anon.post('/api/auth/login', TEST_ADMIN);
    expect(login.status).toBe(200);
    expect(typeof login.body.token).toBe('string');
    expect(Date.parse(login.body.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('refuses API routes and the OpenAPI document without a token', async () => {
    for (const path of ['/api/queues', '/api/dead-jobs', '/api/openapi.json', '/api/tasks/x']) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(401);
      expect(res.body.error.code).toBe('unauthenticated');
    }
  });

  it('refuses a bad signature, an expired token and a logged-out token with 401', async () => {
    const forged = await forgeToken('another-secret-0123456789abcdef0123456789', { exp: Math.floor(Date.now() / 1000) + 600 });
    expect((await anon.withToken(forged).get('/api/queues')).body.error.code).toBe('invalid_token');
    const expired = await forgeToken(TEST_JWT_SECRET, { exp: Math.floor(Date.now() / 1000) - 10 });
    const res = await anon.withToken(expired).get('/api/queues');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('token_expired');

    const client = new ApiClient(t.api.baseUrl);
    await client.login(TEST_ADMIN.username, TEST_ADMIN.password);
    expect((await client.get('/api/queues')).status).toBe(200);
    expect((await client.post('/api/auth/logout')).status).toBe(204);
    const after = await client.get('/api/queues');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('token_revoked');
  });

  it('keeps the blacklist entry exactly as long as the token lives', async () => {
    const client = new ApiClient(t.api.baseUrl);
    const token = await client.login(TEST_ADMIN.username, TEST_ADMIN.password);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    await client.post('/api/auth/logout');
    const ttl = await t.platform.ctx.redis.ttl(t.platform.ctx.keys.blacklistedSession(claims.sid));
    const remaining = claims.exp - Math.floor(Date.now() / 1000);
    expect(ttl).toBeGreaterThan(remaining - 5);
    expect(ttl).toBeLessThanOrEqual(remaining + 1);
  });

  it('rate limits failed logins per user', async () => {
    for (let i = 0; i < 3; i++) expect((await anon.post('/api/auth/login', { username: 'mallory', password: 'guess' })).status).toBe(401);
    const blocked = await anon.post('/api/auth/login', { username: 'mallory', password: 'guess' });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
  });

  it('answers bad login input with 400 naming the field', async () => {
    const missing = await anon.post('/api/auth/login', { username: 'admin' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe('password');
    const wrongType = await anon.post('/api/auth/login', { username: 42, password: 'x' });
    expect(wrongType.body.error.field).toBe('username');
    const malformed = await anon.post('/api/auth/login', '{"username": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('malformed_json');
  });
});

describe('auth when Redis is down', () => {
  it('fails secure (503) by default and recovers when Redis returns', async () => {
    const t = await startTestPlatform({ roles: ['api'] });
    try {
      await t.redis.stop();
      const res = await t.api.get('/api/queues');
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('redis_unavailable');
      const ready = await t.api.withToken(undefined).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.error.field).toBe('redis');
      t.redis = await t.redis.restart();
      await waitFor(async () => (await t.api.get('/api/queues')).status === 200, { timeoutMs: 15_000, message: 'auth did not recover' });
    } finally {
      await t.stop();
    }
  });

  it('lets valid tokens through with AUTH_FAIL_OPEN=true', async () => {
    const t = await startTestPlatform({ roles: ['api'], env: { AUTH_FAIL_OPEN: 'true' } });
    try {
      await t.redis.stop();
      const res = await t.api.get('/api/openapi.json');
      expect(res.status).toBe(200);
      const forged = await forgeToken('another-secret-0123456789abcdef0123456789', { exp: Math.floor(Date.now() / 1000) + 600 });
      expect((await t.api.withToken(forged).get('/api/openapi.json')).status).toBe(401);
    } finally {
      t.redis = await t.redis.restart();
      await t.stop();
    }
  });
});
