/**
 * An in-process platform for a test file: its own Redis and database (unless given), the
 * requested roles, and an API client logged in as the admin when the api role runs.
 */
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config/index.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import type { RoleName } from '../../src/runtime/roles.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { TEST_ADMIN, testEnv } from './env.js';
import { ApiClient } from './http-client.js';
import { startTestRedis, type TestRedis } from './redis.js';

export interface TestPlatform {
  platform: PlatformHandle;
  redis: TestRedis;
  db: TestDatabase;
  env: NodeJS.ProcessEnv;
  /** Logged in as the admin when the api role runs. */
  api: ApiClient;
  /** Stops the platform (and the Redis/database it created). */
  stop(): Promise<void>;
}

export async function startTestPlatform(
  options: { roles: RoleName[]; env?: Record<string, string>; redis?: TestRedis; db?: TestDatabase } = { roles: ['api'] },
): Promise<TestPlatform> {
  const redis = options.redis ?? (await startTestRedis());
  const db = options.db ?? (await createTestDatabase());
  const env = testEnv(redis, db, options.env);
  const platform = await startPlatform({ roles: options.roles, config: loadConfig(env) });
  const api = new ApiClient(platform.apiUrl ?? 'http://127.0.0.1:0');
  if (platform.apiUrl) await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
  let stopping: Promise<void> | undefined;
  const t: TestPlatform = {
    platform,
    redis,
    db,
    env,
    api,
    stop: () =>
      (stopping ??= (async () => {
        await platform.stop();
        // t.redis, not the first server: a test that restarted Redis put the running one there.
        if (!options.redis) await t.redis.destroy();
        if (!options.db) await db.drop();
        rmSync(env.DATA_DIR!, { recursive: true, force: true });
      })()),
  };
  return t;
}
