/**
 * Finding 9: POST /admin/login with `username` repeated answered 503 `redis_unavailable` while
 * Redis was up: any exception in the login was reported as Redis being down (and with
 * AUTH_FAIL_OPEN=true that skipped the rate limit). Now a repeated form field is 400, only a Redis
 * outage reads as one, and an unexpected exception is a 500 carrying the request id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN } from '../support/env.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const form = (fields: [string, string][]) => ({
  body: fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

describe.each<{ name: string; env: Record<string, string> }>([
  { name: 'fail secure', env: {} },
  { name: 'AUTH_FAIL_OPEN=true', env: { AUTH_FAIL_OPEN: 'true' } },
])('unexpected input and errors ($name)', ({ env }) => {
  let t: TestPlatform;
  let anon: ApiClient;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { ...env, LOGIN_RATE_LIMIT_MAX: '3' } });
    anon = t.api.withToken(undefined);
  });
  afterAll(() => t?.stop());

  it('answers a repeated or malformed Bull Board login form with 400, not redis_unavailable, and still rate limits', async () => {
    for (const fields of [
      [
        ['username', 'admin'],
        ['username', 'admin'],
        ['password', 'x'],
      ],
      [
        ['username', 'admin'],
        ['password', 'a'],
        ['password', 'b'],
      ],
      [
        ['username', 'admin\u0000'],
        ['password', 'x'],
      ],
    ] as [string, string][][]) {
      const { body, headers } = form(fields);
      const res = await anon.request('POST', '/admin/login', body, headers);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(String(res.body)).not.toContain('redis_unavailable');
    }
    for (let i = 0; i < 3; i++) {
      const { body, headers } = form([
        ['username', TEST_ADMIN.username],
        ['password', `wrong-${i}`],
      ]);
      expect((await anon.request('POST', '/admin/login', body, headers)).status).toBe(401);
    }
    const { body, headers } = form([
      ['username', TEST_ADMIN.username],
      ['password', 'wrong-again'],
    ]);
    expect((await anon.request('POST', '/admin/login', body, headers)).status).toBe(429);
  });

  it('answers a repeated query field with 400 naming it', async () => {
    const res = await t.api.get('/api/dead-jobs?limit=1&limit=2');
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('limit');
  });

  it('answers an unexpected exception with 500 and a request id, never as Redis being down', async () => {
    // Break the database under the platform: the users table is gone.
    await t.platform.ctx.db.pool.query('ALTER TABLE users RENAME TO users_gone');
    try {
      const res = await anon.post('/api/auth/login', { username: 'someone', password: 'x' }, { 'x-request-id': 'find-me-123' });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('internal_error');
      expect(res.body.error.requestId).toBe('find-me-123');
      expect(res.headers.get('x-request-id')).toBe('find-me-123');
      const { body, headers } = form([
        ['username', 'someone'],
        ['password', 'x'],
      ]);
      const board = await anon.request('POST', '/admin/login', body, headers);
      expect(board.status).toBe(500);
      expect(JSON.stringify(board.body)).not.toContain('redis_unavailable');
    } finally {
      await t.platform.ctx.db.pool.query('ALTER TABLE users_gone RENAME TO users');
    }
  });
});
