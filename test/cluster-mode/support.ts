/**
 * An in-process platform on a Redis Cluster (REDIS_CLUSTER_NODES), like startTestPlatform but
 * without a standalone Redis, and with its log lines kept so a test can check that no cluster
 * error (CROSSSLOT, unfollowed redirections, cross-node pipelines) was logged anywhere.
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
import type { TestRedisCluster } from '../support/redis-cluster.js';

/** What a Redis Cluster incompatibility looks like in an error message. */
export const CLUSTER_ERROR =
  /CROSSSLOT|\bMOVED \d|\bASK \d|TRYAGAIN|CLUSTERDOWN|same slot|slots allocation group|non local key|Cluster redirections|Cluster not ready/i;

export interface ClusterPlatform {
  platform: PlatformHandle;
  db: TestDatabase;
  env: NodeJS.ProcessEnv;
  api: ApiClient;
  /** Log lines (JSON) at warn and above, and any line that looks like a cluster error. */
  notable: string[];
  /** Every log line (JSON), parsed. */
  logs: Record<string, unknown>[];
  /** Stops the platform, then drops its database unless it was given (`options.db`). */
  stop(): Promise<void>;
}

/**
 * `options.db`: a database to use (a restart of a platform on the same data); it is not dropped
 * by stop().
 */
export async function startClusterPlatform(
  cluster: TestRedisCluster,
  roles: RoleName[],
  extraEnv: Record<string, string> = {},
  options: { db?: TestDatabase } = {},
): Promise<ClusterPlatform> {
  const db = options.db ?? (await createTestDatabase());
  // REDIS_URL empty = unset: the cluster seeds select the Redis Cluster.
  const env = testEnv({ url: '' }, db, { LOG_LEVEL: 'debug', ...extraEnv, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.seeds });
  const config = loadConfig(env);
  const notable: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
        if (level >= 40 || CLUSTER_ERROR.test(line)) notable.push(line);
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          logs.push({ msg: line });
        }
      }
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
    notable,
    logs,
    stop: () =>
      (stopping ??= (async () => {
        await platform.stop();
        if (!options.db) await db.drop();
        rmSync(env.DATA_DIR!, { recursive: true, force: true });
      })()),
  };
}
