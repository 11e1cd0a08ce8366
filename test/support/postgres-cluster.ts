/**
 * A private PostgreSQL cluster for tests: initdb in a temp dir (as the postgres user when run
 * as root), listening on 127.0.0.1 only, stopped by pg_ctl with its data dir.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/services/free-port.js';

export interface PostgresCluster {
  url: string;
  stop(): Promise<void>;
  /** Stops the server (pg_ctl -m fast), keeping its data dir and port, to simulate a DB outage. */
  stopServer(): Promise<void>;
  /** Starts the server again on the same data dir and port (after stopServer). */
  startServer(): Promise<void>;
}

function binDir(): string {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin/initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0) return path.dirname(which.stdout.trim());
  throw new Error('PostgreSQL server binaries not found: install postgresql (apt-get install postgresql) or set TEST_DATABASE_URL');
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-test-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args], { stdio: 'pipe' }) : execFileSync(path.join(bin, cmd), args, { stdio: 'pipe' });
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB`;
  const startServer = () => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', opts, '-w', 'start']);
  startServer();
  let running = true;
  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async stopServer() {
      if (stopped || !running) return;
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    async startServer() {
      if (stopped) throw new Error('the cluster was removed by stop()');
      if (running) return;
      startServer();
      running = true;
    },
  };
}
