/**
 * A periodic action of a singleton task, bound to one leader term: runs now and then every
 * `intervalMs`, one run at a time, only while `term.isCurrent()`; stops by itself when the term
 * ends. The returned stop function awaits the run in progress. Idempotent.
 *
 * Every leader-only loop runs through it (today the crawl scheduler's backpressure loop); other
 * periodic leader work is a maintenance task (maintenance-worker.ts, started per term).
 *
 *   ctx.leadership.whileLeader('my-task', async (term) => startTermLoop(term, 5000, () => doRound(term), onError));
 */
import type { LeaderTerm } from './leadership.js';

export function startTermLoop(term: LeaderTerm, intervalMs: number, action: () => Promise<void>, onError: (err: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped || running || !term.isCurrent()) return;
    running = action()
      .catch(onError)
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
  term.signal.addEventListener('abort', () => void stop(), { once: true });
  run();
  return stop;
}
