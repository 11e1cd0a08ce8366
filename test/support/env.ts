import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestDatabase } from './database.js';
import type { TestRedis } from './redis.js';

export const TEST_ADMIN = { username: 'admin', password: 'test-admin-password' };
// Random-looking, so that a benchmark may run the platform with NODE_ENV=production (src/config/secret-strength.ts).
export const TEST_JWT_SECRET = 'tk-Vq3xN8rTz1KpL6wYb2HcJ9dFm4sGa7Ue0iXoR5jWq';

/** The environment of a platform under test (or benchmark): its own Redis, database and data dir; `extra` overrides. */
export function testEnv(redis: Pick<TestRedis, 'url'>, db: Pick<TestDatabase, 'url' | 'poolSize'>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'test',
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'wp',
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: String(db.poolSize),
    DATABASE_MIGRATE_ON_START: 'false',
    DATA_DIR: extra.DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'wp-test-data-')),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    LOG_PRETTY: 'false',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    JWT_SECRET: TEST_JWT_SECRET,
    WORKER_SHUTDOWN_GRACE_MS: '5000',
    // The fixture servers (feeds, marketplaces) listen on loopback, which the outbound policy
    // refuses by default; tests of that refusal set OUTBOUND_ALLOW themselves.
    OUTBOUND_ALLOW: '127.0.0.0/8,::1',
    HTTP_SHUTDOWN_GRACE_MS: '2000',
    ...extra,
  };
}
