/**
 * Time limits around work (pure: timers only).
 *
 *   withTimeout    the work's outcome, or a rejection at the limit (or when `signal` aborts); the
 *                  work itself goes on unless `onExpire` stops it, and its late outcome is ignored
 *   settlesWithin  whether a promise settles (either way) within the limit; never rejects
 *
 * For work whose late result must not be lost (a Redis command that may still run), see
 * deadline.ts: it hands the late result over instead.
 */

export interface TimeoutOptions {
  /** The rejection at the limit. */
  error: () => Error;
  /** Gives up as well when this aborts (already aborted: at once), with `abortError`. */
  signal?: AbortSignal;
  abortError?: () => Error;
  /** Called once when giving up, before the rejection is seen (stop the work here). */
  onExpire?: () => void;
}

/**
 * `work` may be a function: it is then started once the limit is armed (so an abort that came
 * before is seen first).
 */
export function withTimeout<T>(work: Promise<T> | (() => Promise<T>), ms: number, options: TimeoutOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
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
    };
    const timer = setTimeout(() => expire(options.error), ms);
    const onAbort = () => expire(options.abortError ?? options.error);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    let running: Promise<T>;
    try {
      running = typeof work === 'function' ? work() : work;
    } catch (err) {
      running = Promise.reject(err);
    }
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
