/**
 * The Prisma client over @prisma/adapter-pg. The pg pool is ours so that shutdown can end it and
 * so that the embedded PGlite gets exactly one connection.
 */
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { Prisma, PrismaClient } from '../generated/prisma/client.js';

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /** Disconnects Prisma and ends the pool. Idempotent. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  statementTimeoutMs?: number;
  /** The embedded PGlite: keep the one connection open instead of closing it when idle. */
  singleConnection?: boolean;
}

export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.singleConnection ? 1 : options.poolSize,
    idleTimeoutMillis: options.singleConnection ? 0 : 30_000,
    connectionTimeoutMillis: 10_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // A broken idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closing: Promise<void> | undefined;
  return {
    prisma,
    pool,
    async ping() {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    close: () =>
      (closing ??= (async () => {
        await prisma.$disconnect().catch(() => undefined);
        await pool.end().catch(() => undefined);
      })()),
  };
}
