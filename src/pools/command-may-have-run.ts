/**
 * Whether a Redis command that failed may have run all the same, i.e. whether its effects are
 * unknown: no reply within the deadline (it may run later), or the connection dropped while it
 * was in flight (it may have run before). False only when Redis certainly did not run it: the
 * connection was not up when it was issued (never sent), or Redis answered with an error reply.
 * A pop that may have run may have moved rows to the consumed list that nobody was served.
 */
const NEVER_SENT = /Stream isn't writeable|enableOfflineQueue/;

export function commandMayHaveRun(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  if (e?.name === 'ReplyError') return false;
  return !(typeof e?.message === 'string' && NEVER_SENT.test(e.message));
}
