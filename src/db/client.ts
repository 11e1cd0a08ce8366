/**
 * The Prisma client over @prisma/adapter-pg. The pg pool is ours so that shutdown can end it and
 * so that a lost database is logged once per outage (not once per failed query).
 *
 * Every wait on the database is bounded on this side, because a frozen server (SIGSTOP, a hung
 * host: the TCP connection stays up and the kernel keeps acknowledging) answers nothing and so
 * never enforces its own statement timeout:
 * - a connection, pooled or new, within `connectTimeoutMs` ("timeout exceeded when trying to
 *   connect", "Connection terminated due to connection timeout");
 * - a query's answer within `queryTimeoutMs` ("Query read timeout"), longer than the statement
 *   timeout so that a server that answers always cancels first. The pool destroys the connection
 *   of a query that timed out (pool.query releases it with the error), so that nothing is ever
 *   sent behind a query the server may still be running.
 * All of these are outages for isDatabaseUnavailable (503 `database_unavailable`, a job waits).
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
  /**
   * True when the database answers a trivial query within 1.5 s, on a connection of its own (a
   * busy pool is not a database down).
   */
  ping(): Promise<boolean>;
  /** Disconnects Prisma and ends the pool. Idempotent. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  statementTimeoutMs?: number;
  /** Wait for a connection (pooled or new); default 5 s. */
  connectTimeoutMs?: number;
  /** Client-side limit of a query's answer; 0 or unset = none (see queryTimeoutOf). */
  queryTimeoutMs?: number;
  /** Logs an outage (a pooled connection lost, or a connect refused) once, and its end. */
  logger?: Logger;
}

/** What is added to the statement timeout when DATABASE_QUERY_TIMEOUT_MS is unset. */
const QUERY_TIMEOUT_MARGIN_MS = 5000;
/** The ping's own limit: /readyz and the dependency monitor must not wait a query timeout. */
const PING_TIMEOUT_MS = 1500;

/** DATABASE_QUERY_TIMEOUT_MS, or when unset the statement timeout plus a margin (none without one). */
export function queryTimeoutOf(database: { statementTimeoutMs: number; queryTimeoutMs: number | undefined }): number {
  return database.queryTimeoutMs ?? (database.statementTimeoutMs ? database.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS : 0);
}

export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
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
  // Interactive transactions may wait 10 s to start instead of Prisma's 2 s (the pool's own
  // connect timeout ends the wait for a connection first), and may run 20 s: a burst of short
  // transactions (parallel subscriptions under the per-user feed limit, say) waits its turn rather
  // than failing.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { maxWait: 10_000, timeout: 20_000 } });
  // The ping's connection, made on first use and dropped once it fails or closes (so the ping after
  // a restart of the server connects again rather than failing); end() destroys the socket of a
  // query still waiting on a frozen server.
  let pinger: Promise<pg.Client> | undefined;
  const connectPinger = () => {
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: PING_TIMEOUT_MS, query_timeout: PING_TIMEOUT_MS });
    const connecting = client.connect().then(() => client);
    const drop = () => {
      if (pinger === connecting) pinger = undefined;
    };
    client.on('error', drop);
    client.on('end', drop);
    return connecting;
  };
  return {
    prisma,
    pool,
    async ping() {
      if (closing) return false;
      const connecting = (pinger ??= connectPinger());
      try {
        await (await connecting).query('SELECT 1');
        return true;
      } catch (err) {
        if (pinger === connecting) pinger = undefined;
        connecting.then(
          (c) => c.end().catch(() => undefined),
          () => undefined,
        );
        lost(toError(err));
        return false;
      }
    },
    close: () =>
      (closing ??= (async () => {
        const ping = pinger;
        pinger = undefined;
        await ping
          ?.then(
            (c) => c.end(),
            () => undefined,
          )
          .catch(() => undefined);
        await prisma.$disconnect().catch(() => undefined);
        await pool.end().catch(() => undefined);
      })()),
  };
}
