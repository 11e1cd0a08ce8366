/**
 * The login limits under parallel attempts.
 *
 * Finding 2 (first round): the limit read the count, checked the password, then raised the count,
 * so 200 parallel wrong logins got 173 password checks (limit 10); and 10 failures from any
 * address locked the account for every address. Now an attempt is counted (atomically) before
 * its password is checked, per (user name, client address).
 *
 * Issue 26 (second round): 400 parallel logins with 400 different unknown user names from one
 * address cost 400 password checks (the limit counted per name and address only), and bcrypt ran
 * on the event loop, so /healthz took 25 s meanwhile. Now an address has its own limit whatever
 * the names, and checks run on password threads. And behind a proxy the client address was the
 * leftmost X-Forwarded-For entry, the client's own choice: 100 logins with a changing first entry
 * cost 100 checks. Now it is the right-most entry that is not a trusted proxy.
 *
 * Password checks are counted by the product metric wp_auth_password_checks_total. Client
 * addresses come from X-Forwarded-For behind the trusted proxy 127.0.0.1 (the traffic itself
 * stays on loopback).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { counterTotal } from '../support/accounts.js';
import { TEST_ADMIN } from '../support/env.js';
import type { ApiClient, ApiResponse } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const LIMIT = 10;
const ADDRESS_LIMIT = 20;
/**
 * Every counted attempt waits for its password check, however slow the machine: an attempt
 * refused as `login_busy` (password-hasher.test.ts) gives its attempt back, which would leave the
 * address less spent than these tests expect.
 */
const EVERY_CHECK_WAITS = { AUTH_PASSWORD_QUEUE_MAX: '1000', AUTH_PASSWORD_WAIT_MS: '60000' };

describe('login rate limit under parallel attempts', () => {
  let t: TestPlatform;
  let anon: ApiClient;
  const checks = () => counterTotal(t, 'wp_auth_password_checks_total');

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api'],
      env: {
        LOGIN_RATE_LIMIT_MAX: String(LIMIT),
        LOGIN_RATE_LIMIT_ADDRESS_MAX: String(ADDRESS_LIMIT),
        HTTP_TRUSTED_PROXIES: '127.0.0.1,::1',
        ...EVERY_CHECK_WAITS,
      },
    });
    anon = t.api.withToken(undefined);
  });
  afterAll(() => t?.stop());

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const statuses = (answers: ApiResponse[]) => answers.map((a) => a.status);

  it('checks the password at most LOGIN_RATE_LIMIT_MAX times for 200 parallel wrong logins, and the right one from another address still works', async () => {
    const before = await checks();
    const attacker = from('203.0.113.7');
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => anon.post('/api/auth/login', { username: TEST_ADMIN.username, password: `guess-${i}` }, attacker)),
    );
    const checked = (await checks()) - before;
    expect(checked).toBeLessThanOrEqual(LIMIT);
    expect(statuses(answers).filter((s) => s === 401)).toHaveLength(checked);
    expect(statuses(answers).filter((s) => s === 429)).toHaveLength(200 - checked);

    // The attacker's address stays refused, without a password check, even with the right password.
    const blocked = await anon.post('/api/auth/login', TEST_ADMIN, attacker);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await checks()) - before).toBe(checked);

    // The admin, from another address, logs in.
    const ok = await anon.post('/api/auth/login', TEST_ADMIN, from('198.51.100.9'));
    expect(ok.status).toBe(200);
    expect(typeof ok.body.token).toBe('string');
  });

  it('checks at most LOGIN_RATE_LIMIT_ADDRESS_MAX passwords for 400 parallel logins with distinct unknown names from one address, and the API answers throughout', async () => {
    const before = await checks();
    const address = from('203.0.113.40');
    let flooding = true;
    const probes: { path: string; status: number; during: boolean }[] = [];
    const probe = async (path: string) => {
      while (flooding) {
        const res = await t.api.get(path);
        probes.push({ path, status: res.status, during: flooding });
      }
    };
    const probing = Promise.all([probe('/healthz'), probe('/api/feeds')]);
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) => anon.post('/api/auth/login', { username: `nobody-${i}-${Math.random()}`, password: 'guess' }, address)),
    );
    flooding = false;
    await probing;
    const checked = (await checks()) - before;
    expect(checked).toBeLessThanOrEqual(ADDRESS_LIMIT);
    expect(statuses(answers).filter((s) => s === 401)).toHaveLength(checked);
    expect(statuses(answers).filter((s) => s === 429)).toHaveLength(400 - checked);
    for (const a of answers.filter((a) => a.status === 401)) expect(a.body.error.code).toBe('invalid_credentials');
    // Health and an authenticated read were answered, and answered 200, while the logins ran.
    for (const path of ['/healthz', '/api/feeds']) {
      const during = probes.filter((p) => p.path === path && p.during);
      expect(during.length, path).toBeGreaterThan(0);
      expect(new Set(during.map((p) => p.status)), path).toEqual(new Set([200]));
    }
    // A known user from that address is refused too (the address is spent), from another it is not.
    expect((await anon.post('/api/auth/login', TEST_ADMIN, address)).status).toBe(429);
    expect((await anon.post('/api/auth/login', TEST_ADMIN, from('198.51.100.41'))).status).toBe(200);
  });

  it('counts a client behind the trusted proxy by the address the proxy appended, not by the first X-Forwarded-For entry it chose', async () => {
    const before = await checks();
    const answers = [];
    for (let i = 0; i < 100; i++) {
      // The client writes a new first entry each time; the proxy (127.0.0.1, trusted) appends the address it saw.
      const chosen = `10.${i % 250}.${(i * 7) % 250}.${(i * 13) % 250}`;
      answers.push(await anon.post('/api/auth/login', { username: TEST_ADMIN.username, password: `guess-${i}` }, from(`${chosen}, 203.0.113.77`)));
    }
    expect((await checks()) - before).toBe(LIMIT);
    expect(statuses(answers).filter((s) => s === 429)).toHaveLength(100 - LIMIT);
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

describe('login rate limit with AUTH_FAIL_OPEN while Redis is down', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api'],
      env: { AUTH_FAIL_OPEN: 'true', LOGIN_RATE_LIMIT_MAX: String(LIMIT), HTTP_TRUSTED_PROXIES: '127.0.0.1,::1', ...EVERY_CHECK_WAITS },
    });
  });
  afterAll(() => t?.stop());

  it('still checks the password at most LOGIN_RATE_LIMIT_MAX times per address, and refuses the right password once spent', async () => {
    const anon = t.api.withToken(undefined);
    await t.redis.stop();
    onTestFinished(async () => {
      t.redis = await t.redis.restart();
    });
    const before = await counterTotal(t, 'wp_auth_password_checks_total');
    const attacker = { 'x-forwarded-for': '203.0.113.9' };
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => anon.post('/api/auth/login', { username: TEST_ADMIN.username, password: `guess-${i}` }, attacker)),
    );
    const checked = (await counterTotal(t, 'wp_auth_password_checks_total')) - before;
    expect(checked).toBeLessThanOrEqual(LIMIT);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(200 - checked);
    // The locked-out password is not accepted from that address; from another, logins go on (fail open).
    expect((await anon.post('/api/auth/login', TEST_ADMIN, attacker)).status).toBe(429);
    const elsewhere = await anon.post('/api/auth/login', TEST_ADMIN, { 'x-forwarded-for': '198.51.100.3' });
    expect(elsewhere.status).toBe(200);
    expect(typeof elsewhere.body.token).toBe('string');
  });
});
