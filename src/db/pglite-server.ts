/**
 * PGlite (PostgreSQL compiled to WASM) served on 127.0.0.1 by pglite-socket, so the platform
 * talks to it through pg and @prisma/adapter-pg exactly as to PostgreSQL.
 *
 * PGlite is single-connection: concurrent clients interleave protocol messages and corrupt
 * each other's queries (offline-stack.md section 3). So one process at a time (the DATA_DIR
 * lock) with one pool of max 1 in front of it. The socket server admits a few connections
 * only so that a pool closing its connection and the next one opening cannot race
 * (pglite-socket frees a closed connection's slot asynchronously); at most one is ever busy.
 */
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgliteServer {
  url: string;
  db: PGlite;
  stop(): Promise<void>;
}

export async function startPglite(options: { dataDir: string; loadDataDir?: Blob; host?: string; port?: number }): Promise<PgliteServer> {
  const db = options.dataDir === 'memory://'
    ? await PGlite.create({ ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) })
    : await PGlite.create(options.dataDir, { ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) });
  const host = options.host ?? '127.0.0.1';
  const server = new PGLiteSocketServer({ db, host, port: options.port ?? 0, maxConnections: 4 });
  await server.start();
  const conn = server.getServerConn(); // "host:port"
  const port = Number(conn.split(':').pop());
  let stopped: Promise<void> | undefined;
  return {
    url: `postgresql://postgres@${host}:${port}/postgres?sslmode=disable`,
    db,
    stop: () =>
      (stopped ??= (async () => {
        await server.stop();
        await db.close();
      })()),
  };
}
