/**
 * Whether an error from the pg driver means "the database cannot be reached right now" (as
 * opposed to a bad statement): connection refused or dropped, server shutting down or starting.
 * Such failures delay a job instead of spending its attempts.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Prisma's own codes for an unreachable server: P1001 can't reach, P1002 timed out, P1017 closed the connection, P2024 pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024']);

function unavailable(e: { code?: unknown; message?: unknown } | undefined): boolean {
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  return (
    NETWORK_CODES.has(code) ||
    PRISMA_CODES.has(code) ||
    code.startsWith('08') || // connection exception class
    code === '57P01' || // admin_shutdown
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now (starting up)
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed/i.test(message)
  );
}

/** Looks through the error and its causes (Prisma's driver adapter wraps the pg error). */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++, e = e.cause as typeof e) {
    if (unavailable(e)) return true;
  }
  return false;
}
