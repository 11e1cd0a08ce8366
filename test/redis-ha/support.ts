/**
 * An in-process platform on a highly available Redis (the environment of a Sentinel set-up or a
 * Redis Cluster with replicas), like startTestPlatform but without a standalone Redis, with every
 * log line kept (raw), so that a test can check what was logged, secrets included.
 */
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logging/logger.js';
import type { RoleName } from '../../src/runtime/roles.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';

export interface HaPlatform {
  platform: PlatformHandle;
  db: TestDatabase;
  env: NodeJS.ProcessEnv;
  api: ApiClient;
  /** Every log line, as written. */
  lines: string[];
  stop(): Promise<void>;
}

export async function startHaPlatform(redisEnv: Record<string, string>, roles: RoleName[], extraEnv: Record<string, string> = {}): Promise<HaPlatform> {
  const db = await createTestDatabase();
  // REDIS_URL empty = unset: redisEnv names the Redis.
  const env = testEnv({ url: '' }, db, { LOG_LEVEL: 'debug', HTTP_ACCESS_LOG: 'false', ...extraEnv, ...redisEnv, REDIS_URL: '' });
  const config = loadConfig(env);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(line);
      done();
    },
  });
  const platform = await startPlatform({ roles, config, logger: createLogger(config, sink) });
  const api = new ApiClient(platform.apiUrl ?? 'http://127.0.0.1:0');
  if (platform.apiUrl) await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
  let stopping: Promise<void> | undefined;
  return {
    platform,
    db,
    env,
    api,
    lines,
    stop: () =>
      (stopping ??= (async () => {
        await platform.stop();
        await db.drop();
        rmSync(env.DATA_DIR!, { recursive: true, force: true });
      })()),
  };
}
