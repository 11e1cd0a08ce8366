/**
 * The Prisma client over @prisma/adapter-pg. The pg pool is ours so that shutdown can end it and
 * so that a lost database is logged once per outage (not once per failed query).
 */
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { toError } from '../errors.js';

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
  /** Logs an outage (a pooled connection lost, or a connect refused) once, and its end. */
  logger?: Logger;
}

export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  let closing: Promise<void> | undefined;
  const outage = new OutageLog<Error>({
    began: (err) => {
      if (!closing) options.logger?.warn({ err: err.message }, 'database connection lost; queries fail until it is back');
    },
    ended: () => {
      if (!closing) options.logger?.info('database connection restored');
    },
  });
  const lost = (err: Error) => outage.failure(err);
  // A broken idle connection must not crash the process; the pool replaces it.
  pool.on('error', lost);
  pool.on('connect', () => outage.success());
  // Interactive transactions wait for a connection as long as the pg pool would (10 s) instead of
  // Prisma's 2 s, and may run 20 s: a burst of short transactions (parallel subscriptions under the
  // per-user feed limit, say) waits its turn rather than failing.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { maxWait: 10_000, timeout: 20_000 } });
  return {
    prisma,
    pool,
    async ping() {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch (err) {
        lost(toError(err));
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
