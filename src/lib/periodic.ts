/**
 * A periodic action that never overlaps itself: it runs now (unless `runNow: false`) and then
 * every `intervalMs`; a tick that finds the previous run still going is skipped. The timer does
 * not keep the process alive. A run's failure goes to `onError` (default: ignored; an action that
 * logs its own failures needs none). The returned stop function ends the ticks and resolves when
 * the run in progress has finished; it is idempotent. Pure: timers only.
 *
 * The platform's in-process loops run through it: a leader term's loop (src/coordination/term-loop.ts),
 * the registry heartbeat and the shared config follower's check.
 */
export interface PeriodicOptions {
  runNow?: boolean;
  onError?: (err: unknown) => void;
}

export function startPeriodic(action: () => Promise<unknown>, intervalMs: number, options: PeriodicOptions = {}): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped || running) return;
    running = action()
      .then(
        () => undefined,
        (err: unknown) => options.onError?.(err),
      )
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    })());
  if (options.runNow ?? true) run();
  return stop;
}
