import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedisServer, type RedisServerProcess } from '../../src/services/redis-server-process.js';

export interface TestRedis extends RedisServerProcess {
  dir: string;
  /** Starts the server again on the same port and data dir (after stop/kill). */
  restart(): Promise<TestRedis>;
  /** Stops the server and removes its data. */
  destroy(): Promise<void>;
}

/** A private redis-server (AOF on) for one test file. */
export async function startTestRedis(options: { dir?: string; port?: number; extraArgs?: string[] } = {}): Promise<TestRedis> {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'wp-test-redis-'));
  const server = await startRedisServer({
    dir,
    ...(options.port ? { port: options.port } : {}),
    ...(options.extraArgs ? { extraArgs: options.extraArgs } : {}),
  });
  return {
    ...server,
    dir,
    restart: () => startTestRedis({ dir, port: server.port, ...(options.extraArgs ? { extraArgs: options.extraArgs } : {}) }),
    destroy: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
