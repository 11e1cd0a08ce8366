/**
 * Finding 2: the login rate limit read the count, checked the password, then raised the count, so
 * 200 parallel wrong logins got 173 password checks (limit 10); and 10 failures from any address
 * locked the account for every address. Now an attempt is counted (atomically) before its
 * password is checked, per (user name, client address).
 *
 * Password checks are counted twice: by a spy on bcrypt's compare (the one place a hash is
 * compared) and by the product metric wp_auth_password_checks_total. Client addresses come from
 * X-Forwarded-For with HTTP_TRUST_PROXY=true (the traffic itself stays on loopback).
 */
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { counterTotal } from '../support/accounts.js';
import { TEST_ADMIN } from '../support/env.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const LIMIT = 10;

describe('login rate limit under parallel attempts', () => {
  let t: TestPlatform;
  let anon: ApiClient;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { LOGIN_RATE_LIMIT_MAX: String(LIMIT), HTTP_TRUST_PROXY: 'true' } });
    anon = t.api.withToken(undefined);
  });
  afterAll(() => t?.stop());
  afterEach(() => vi.restoreAllMocks());

  const from = (address: string) => ({ 'x-forwarded-for': address });

  it('checks the password at most LOGIN_RATE_LIMIT_MAX times for 200 parallel wrong logins, and the right one from another address still works', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const metricBefore = await counterTotal(t, 'wp_auth_password_checks_total');
    const attacker = from('203.0.113.7');
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => anon.post('/api/auth/login', { username: TEST_ADMIN.username, password: `guess-${i}` }, attacker)),
    );
    const statuses = answers.map((a) => a.status);
    expect(compare.mock.calls.length).toBeLessThanOrEqual(LIMIT);
    expect(statuses.filter((s) => s === 401)).toHaveLength(compare.mock.calls.length);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - compare.mock.calls.length);
    expect(await counterTotal(t, 'wp_auth_password_checks_total')).toBe(metricBefore + compare.mock.calls.length);

    // The attacker's address stays refused, without a password check, even with the right password.
    const checks = compare.mock.calls.length;
    const blocked = await anon.post('/api/auth/login', TEST_ADMIN, attacker);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
    expect(compare.mock.calls.length).toBe(checks);

    // The admin, from another address, logs in.
    const ok = await anon.post('/api/auth/login', TEST_ADMIN, from('198.51.100.9'));
    expect(ok.status).toBe(200);
    expect(typeof ok.body.token).toBe('string');
  });

  it('does not count successful logins against the limit', async () => {
    const home = from('198.51.100.20');
    for (let i = 0; i < LIMIT + 5; i++) expect((await anon.post('/api/auth/login', TEST_ADMIN, home)).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await anon.post('/api/auth/login', { ...TEST_ADMIN, password: 'wrong' }, home)).status).toBe(401);
    expect((await anon.post('/api/auth/login', TEST_ADMIN, home)).status).toBe(429);
  });

  it('counts an IPv6 client by its /64', async () => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await anon.post('/api/auth/login', { username: 'v6-target', password: 'x' }, from(`2001:db8:aa:bb::${i + 1}`))).status).toBe(401);
    }
    expect((await anon.post('/api/auth/login', { username: 'v6-target', password: 'x' }, from('2001:db8:aa:bb:ffff::1'))).status).toBe(429);
    expect((await anon.post('/api/auth/login', { username: 'v6-target', password: 'x' }, from('2001:db8:aa:cc::1'))).status).toBe(401);
  });
});
