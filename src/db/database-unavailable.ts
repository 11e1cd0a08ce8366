/**
 * Whether an error means "the database cannot be reached or cannot take a connection right now"
 * (as opposed to refusing a statement): such a failure delays a job instead of spending its
 * attempts, takes a fallback path, or answers 503 rather than 500.
 *
 * Errors come in three shapes, all recognised here:
 * - from the pg driver or pool: a socket error code (ECONNREFUSED, ...), a server error with a
 *   SQLSTATE of the connection class (08xxx), a shutdown or start-up (57P01-57P03), too many
 *   connections (53300), or a message of the driver (`Connection terminated unexpectedly`,
 *   `timeout exceeded when trying to connect`, `Query read timeout`: no answer within the
 *   client-side query timeout, as from a frozen server, see client.ts; a client or pool used
 *   after its end);
 * - from Prisma over @prisma/adapter-pg: P1001 (cannot reach), P1002 (timed out), P1017 (server
 *   closed the connection), or any code with `meta.driverAdapterError.cause` (a raw query is
 *   P2010) whose kind is DatabaseNotReachable, ConnectionClosed, SocketTimeout or
 *   TooManyConnections, or kind `postgres` with one of the SQLSTATEs above;
 * - wrapped: the same as the `cause` of another error (up to a few levels).
 *
 * A busy pool (Prisma P2024, P2028: no connection or no transaction start in time) is not an
 * outage; the HTTP layer answers it as `database_busy`. Redis errors are not recognised here
 * (`Connection is closed` is ioredis's): see src/redis/redis-unavailable.ts.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PRISMA_UNREACHABLE = new Set(['P1001', 'P1002', 'P1017']);
const ADAPTER_UNREACHABLE = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const DRIVER_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end/i;

function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** The cause Prisma gives for an error of the driver adapter (`meta.driverAdapterError.cause`), or the adapter error's own. */
function adapterCause(e: Record<string, unknown>): Record<string, unknown> | undefined {
  const meta = e.meta as { driverAdapterError?: { cause?: unknown } } | undefined;
  const cause = meta?.driverAdapterError?.cause ?? (e.name === 'DriverAdapterError' ? e.cause : undefined);
  return cause !== null && typeof cause === 'object' ? (cause as Record<string, unknown>) : undefined;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const e = current as Record<string, unknown>;
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' ? e.message : '';
    if (NETWORK_CODES.has(code) || isUnavailableSqlState(code) || PRISMA_UNREACHABLE.has(code) || DRIVER_MESSAGE.test(message)) return true;
    if (e.name === 'DriverAdapterError' && /connect|closed|terminated/i.test(message)) return true;
    const cause = adapterCause(e);
    if (cause) {
      if (typeof cause.kind === 'string' && ADAPTER_UNREACHABLE.has(cause.kind)) return true;
      const sqlState = cause.originalCode ?? cause.code;
      if (cause.kind === 'postgres' && typeof sqlState === 'string' && isUnavailableSqlState(sqlState)) return true;
    }
    current = e.cause;
  }
  return false;
}
