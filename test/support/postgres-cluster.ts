/**
 * A private PostgreSQL cluster for tests and benchmarks: the platform's own server process
 * (src/services/postgres-server-process.ts) in a temp dir, trust authentication, fsync off,
 * listening on 127.0.0.1 only; stopped by its pid and removed.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgresServer, type PostgresServerProcess } from '../../src/services/postgres-server-process.js';

export interface PostgresCluster {
  url: string;
  stop(): Promise<void>;
  /** Stops the server (fast shutdown), keeping its data dir and port, to simulate a DB outage. */
  stopServer(): Promise<void>;
  /** Starts the server again on the same data dir and port (after stopServer). */
  startServer(): Promise<void>;
  /** The server's (postmaster's) pid, while it runs. */
  pid(): number | undefined;
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
  return {
    url: server.adminUrl,
    async stop() {
      if (removed) return;
      removed = true;
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
    pid: () => server?.pid,
  };
}
