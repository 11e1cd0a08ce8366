/**
 * A deadline around work that goes on after it (a Redis command already sent): the caller gets
 * the result in time or a DeadlineError, and a result that comes later is handed to `onLate`
 * instead of being dropped, so the caller can undo what the work did (src/pools/pool-lists.ts puts the
 * items of a late pop back). Pure: timers only.
 *
 * When the deadline fires it gives up only one turn of the event loop later (setImmediate):
 * after a stalled loop (GC, CPU starvation) the timer and a reply already sitting in the socket
 * are both due, timers run first, and the extra turn lets the reply be read and win.
 */

export class DeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`no reply within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

/** Ignores the late outcome (the work's rejection included). */
const dropLate = (late: Promise<unknown>) => void late.catch(() => undefined);

/**
 * `work`'s result within `ms`, or the error `timedOut` makes (default a DeadlineError; a caller
 * that knows what did not answer says so with a subclass, e.g. RedisNoReplyError), with a late
 * result handed to `onLate`.
 */
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  onLate: (late: Promise<T>) => void = dropLate,
  timedOut: (ms: number) => DeadlineError = (after) => new DeadlineError(after),
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(timedOut(ms));
        onLate(work);
      });
    }, ms);
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
