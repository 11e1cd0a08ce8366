/**
 * Finding 3: a production start with a new ADMIN_USERNAME left the old admin / change-me account
 * working, and a 1-character ADMIN_PASSWORD was accepted in production. Now production refuses an
 * ADMIN_PASSWORD under 12 characters and a JWT_SECRET that is not 32 random-looking bytes, and
 * disables at start every account still holding the example password.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startPlatform } from '../../src/runtime/start-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

describe('production start', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  const dirs: string[] = [];

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await redis?.destroy();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const start = (env: Record<string, string>) => {
    const e = testEnv(redis, db, env);
    dirs.push(e.DATA_DIR!);
    return startPlatform({ roles: ['api'], config: loadConfig(e) });
  };
  const production = { NODE_ENV: 'production', JWT_SECRET: randomBytes(48).toString('base64') };

  it('disables the old admin that still has the example password when the admin moved to another name', async () => {
    // An install started with the defaults: admin / change-me.
    const first = await start({ NODE_ENV: 'development', ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'change-me' });
    const before = new ApiClient(first.apiUrl!);
    expect((await before.post('/api/auth/login', { username: 'admin', password: 'change-me' })).status).toBe(200);
    await first.stop();

    // Moved to production under another name.
    const second = await start({ ...production, ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'a-long-admin-password' });
    try {
      const anon = new ApiClient(second.apiUrl!);
      const old = await anon.post('/api/auth/login', { username: 'admin', password: 'change-me' });
      expect(old.status).toBe(401);
      const root = new ApiClient(second.apiUrl!);
      await root.login('root', 'a-long-admin-password');
      const users = await root.get('/api/users');
      expect(users.body.users).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ username: 'admin', disabled: true }),
          expect.objectContaining({ username: 'root', role: 'admin', disabled: false }),
        ]),
      );
    } finally {
      await second.stop();
    }
  });

  it('refuses a short ADMIN_PASSWORD and a JWT_SECRET that does not look random', async () => {
    await expect(start({ ...production, ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'x' })).rejects.toThrow(/^ADMIN_PASSWORD: must be at least 12 characters/);
    await expect(start({ ...production, ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'elevenchars' })).rejects.toThrow(/ADMIN_PASSWORD/);
    await expect(start({ ...production, JWT_SECRET: 'a'.repeat(48), ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'a-long-admin-password' })).rejects.toThrow(
      /^JWT_SECRET: does not look random/,
    );
  });
});
