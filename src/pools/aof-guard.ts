/**
 * A pool pop is answered only when Redis writes it to its AOF before it replies, so a redis-server
 * killed (SIGKILL, OOM killer, crash) and started again on its AOF still holds every pop it
 * answered: the popped rows are in the consumed list, not back in the pool to be served again.
 *
 * Why a guard: Redis writes its AOF buffer to the file (the page cache, which outlives the
 * process) once per event-loop turn, before it sends that turn's replies, EXCEPT with
 * `appendfsync everysec` (the default) while its background fsync of the previous second is still
 * running: it then holds the write back (up to 2 s) and sends the replies all the same. A kill in
 * such a window loses writes Redis acknowledged; for a pop, its rows come back into the pool with
 * the restart and are served twice (measured: test/pools/pool-redis-killed.test.ts). The fsync
 * runs once a second for as long as the disk takes (milliseconds; far longer on a busy disk).
 *
 * The guard, at the top of a pop script, reads `aof_pending_bio_fsync` (INFO persistence) and,
 * while an fsync runs, refuses the pop (error reply AOFBUSY: nothing popped). Only the main thread
 * starts an fsync, and only right after it wrote the whole AOF buffer; so with none running when
 * the script runs, the script's effects are written in this turn, before its reply. The caller
 * sends the pop again a little later (`untilAofWritable`), within the pop's deadline; past it the
 * pop is answered from the DB, as for a Redis too slow to answer. Cost: one INFO persistence and a
 * plain search of its text per pop script, about 4 µs of Redis CPU (bench:pools, Redis's side of a
 * pop: the pop script 9.0 µs, without the guard 5.05 µs, a bare RPOP 0.8 µs). A server without an AOF, with
 * another fsync policy, or whose INFO is refused (ACL, renamed) reports no running fsync or no
 * answer: no guard there (without an AOF a kill loses everything since the last save anyway, see
 * docs/pools.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export const AOF_BUSY = 'AOFBUSY';

/** The INFO persistence field the guard reads: the background fsyncs running (0, 1; never a leading zero). */
const FIELD = 'aof_pending_bio_fsync:';

/**
 * The guard's Lua, put in a pop script before its first write (a `{{aofGuard}}` part). It finds the
 * field with a plain search and reads the first digit of its count (a digit 1–9: an fsync runs).
 * A Lua pattern (`string.match(…, 'aof_pending_bio_fsync:(%d+)')`), as first written, tries every
 * offset of the ~1 KB section: the pop script cost Redis 12.6–12.75 µs of CPU with it, 9.0 µs
 * with the plain search (bench:pools, Redis's side of a pop).
 */
export const aofGuardLua = `do
  local persistence = redis.pcall('INFO', 'persistence')
  local at = type(persistence) == 'string' and string.find(persistence, '${FIELD}', 1, true)
  local first = at and string.byte(persistence, at + ${FIELD.length})
  if first and first > 48 and first <= 57 then return redis.error_reply('${AOF_BUSY} Redis is still syncing its AOF; the pop would be answered before it is written') end
end`;

/** True for the error reply of a pop the guard refused (nothing was popped). */
export function isAofBusyReply(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  return e?.name === 'ReplyError' && typeof e.message === 'string' && e.message.startsWith(`${AOF_BUSY} `);
}

/** Waits between two tries of a refused pop: short at first (an fsync usually takes milliseconds), then every 25 ms. */
const RETRY_MS = [1, 2, 5, 10, 25];

/**
 * Sends `pop` until the guard lets it run. Rejects with the guard's reply rather than send it again
 * at or after `giveUpAt` (the pop's deadline): nothing was popped, so the caller takes its
 * fallback, and a late rejection (after the deadline) leaves no rows in doubt.
 */
export function untilAofWritable<T>(pop: () => Promise<T>, giveUpAt: number): Promise<T> {
  // The first try as it is (the usual case: no fsync running); the loop only once it was refused.
  return pop().catch((err: unknown) => {
    if (!isAofBusyReply(err)) throw err;
    return retryWhileAofBusy(pop, giveUpAt, err);
  });
}

async function retryWhileAofBusy<T>(pop: () => Promise<T>, giveUpAt: number, refused: unknown): Promise<T> {
  let err = refused;
  for (let attempt = 0; ; attempt++) {
    const wait = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!;
    if (Date.now() + wait >= giveUpAt) throw err;
    await sleep(wait);
    if (Date.now() >= giveUpAt) throw err; // the wait overran (a busy event loop)
    try {
      return await pop();
    } catch (next) {
      if (!isAofBusyReply(next)) throw next;
      err = next;
    }
  }
}
