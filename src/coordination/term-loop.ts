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
import { startPeriodic } from '../lib/periodic.js';
import type { LeaderTerm } from './leadership.js';

export function startTermLoop(term: LeaderTerm, intervalMs: number, action: () => Promise<void>, onError: (err: unknown) => void): () => Promise<void> {
  const stop = startPeriodic(() => (term.isCurrent() ? action() : Promise.resolve()), intervalMs, { onError });
  term.signal.addEventListener('abort', () => void stop(), { once: true });
  return stop;
}
