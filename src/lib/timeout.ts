/**
 * Time limits around work (pure: timers only).
 *
 *   withTimeout    the work's outcome, or a rejection at the limit (or when `signal` aborts); the
 *                  work itself goes on unless `onExpire` stops it. Its late outcome is ignored,
 *                  or handed to `onLate` when it must not be lost (a Redis command that may still
 *                  run: src/pools/pool-lists.ts puts the items of a late pop back)
 *   settlesWithin  whether a promise settles (either way) within the limit; never rejects
 *
 * At the limit the work gets one more turn of the event loop (setImmediate) before it is given
 * up: after a stalled loop (GC, CPU starvation) the timer and a reply already sitting in the
 * socket are both due, timers run first, and the extra turn lets the reply be read and win.
 */

/** The rejection of a limit without an error of its own: no reply in time. */
export class DeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`no reply within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

export interface TimeoutOptions<T> {
  /** The rejection at the limit (default: a DeadlineError). */
  error?: () => Error;
  /** Gives up as well when this aborts (already aborted: at once), with `abortError`. */
  signal?: AbortSignal;
  abortError?: () => Error;
  /** Called once when giving up, before the rejection is seen (stop the work here). */
  onExpire?: () => void;
  /** Gets the work's outcome when it comes after giving up (its rejection included); default: ignored. */
  onLate?: (late: Promise<T>) => void;
}

/**
 * `work` may be a function: it is then started once the limit is armed (so an abort that came
 * before is seen first).
 */
export function withTimeout<T>(work: Promise<T> | (() => Promise<T>), ms: number, options: TimeoutOptions<T> = {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let running: Promise<T> | undefined;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const expire = (error: () => Error) => {
      if (settled) return;
      settle();
      options.onExpire?.();
      reject(error());
      if (running) options.onLate?.(running);
    };
    const limitError = options.error ?? (() => new DeadlineError(ms));
    const timer = setTimeout(() => setImmediate(() => expire(limitError)), ms);
    const onAbort = () => expire(options.abortError ?? limitError);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      running = typeof work === 'function' ? work() : work;
    } catch (err) {
      running = Promise.reject(err);
    }
    if (settled) options.onLate?.(running); // gave up before it started (an aborted signal)
    running.then(
      (value) => {
        if (settled) return;
        settle();
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settle();
        reject(err);
      },
    );
  });
}

/** Whether `promise` settles (resolves or rejects) within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}
