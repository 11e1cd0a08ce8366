/**
 * A private PostgreSQL cluster for tests and benchmarks: the platform's own server process
 * (src/services/postgres-server-process.ts) in a temp dir, trust authentication, fsync off,
 * listening on 127.0.0.1 only; stopped by its pid and removed. A test may stop and start it
 * (an outage), or freeze and thaw it (SIGSTOP / SIGCONT, a server that answers nothing).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  /**
   * Freezes the server: SIGSTOP to the postmaster and every process it started, so connections
   * are accepted by the kernel and never answered, and open ones hang (a frozen VM, a stuck host).
   */
  pause(): void;
  /** Thaws what pause() froze. */
  resume(): void;
}

/** The postmaster and the processes it started (its backends and auxiliary processes). */
function serverProcesses(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after its ')'.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
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
  let frozen: number[] = [];
  return {
    url: server.adminUrl,
    async stop() {
      if (removed) return;
      removed = true;
      signalAll(frozen, 'SIGCONT');
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
      // The postmaster first, so that it starts no process after its children are listed.
      process.kill(server.pid, 'SIGSTOP');
      frozen = serverProcesses(server.pid);
      signalAll(frozen, 'SIGSTOP');
    },
    resume() {
      signalAll(frozen.reverse(), 'SIGCONT');
      frozen = [];
    },
  };
}
