/**
 * A private PostgreSQL cluster for tests and benchmarks: the platform's own server process
 * (src/services/postgres-server-process.ts) in a temp dir, trust authentication, fsync off,
 * listening on 127.0.0.1 only; stopped by its pid and removed. A test may stop and start it
 * (an outage), or freeze and thaw it (SIGSTOP / SIGCONT, a server that answers nothing).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgresServer, type PostgresServerProcess } from '../../src/services/postgres-server-process.js';
import { freezeProcessTree } from './process-tree.js';

export interface PostgresCluster {
  url: string;
  stop(): Promise<void>;
  /** Stops the server (fast shutdown), keeping its data dir and port, to simulate a DB outage. */
  stopServer(): Promise<void>;
  /** Starts the server again on the same data dir and port (after stopServer). */
  startServer(): Promise<void>;
  /**
   * Freezes the server: SIGSTOP to the postmaster and every process it started, so connections
   * are accepted by the kernel and never answered, and open ones hang (a frozen VM, a stuck host).
   */
  pause(): void;
  /** Thaws what pause() froze. */
  resume(): void;
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-test-pg-'));
  chmodSync(dir, 0o755); // as root the server runs as the postgres user, which must reach it
  const start = (port?: number) =>
    startPostgresServer({
      dir: path.join(dir, 'pg'),
      durable: false,
      settings: { max_connections: '300', shared_buffers: '128MB' },
      ...(port ? { port } : {}),
    });
  let server: PostgresServerProcess | undefined = await start();
  const port = server.port;
  let removed = false;
  let thaw: (() => void) | null = null;
  return {
    url: server.adminUrl,
    async stop() {
      if (removed) return;
      removed = true;
      thaw?.();
      try {
        await server?.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async stopServer() {
      await server?.stop();
      server = undefined;
    },
    async startServer() {
      if (removed) throw new Error('the cluster was removed by stop()');
      server ??= await start(port);
    },
    pause() {
      if (!server) throw new Error('the server is not running');
      thaw = freezeProcessTree(server.pid);
    },
    resume() {
      thaw?.();
      thaw = null;
    },
  };
}
