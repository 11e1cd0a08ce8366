/**
 * Retrying one job (POST /api/queues/:name/jobs/:id/retry, Bull Board's Retry): a failed job is
 * replayed with its full attempts, through its chain when its queue has one (`chain`: what became
 * of it; the dead job itself may be gone, its work carried on by `chain.taskId`). A completed job
 * of a chain is not retried (it would run a finished link again: a crawl that fails as stale, a
 * second pending refresh): its domain's route runs the chain now. The answer says where the job
 * is now (no stack trace, no data); the job is read once, before the replay.
 */
import { InvalidStateError } from '../errors.js';
import { REPLAY, replayFailed, type ChainReplay } from './chain-replays.js';
import type { ConsoleContext } from './console-context.js';
import { jobOr404 } from './find-job.js';

export interface RetriedJob {
  id: string;
  queue: string;
  name: string;
  /** Its state after the retry; `replaced` when its chain's replay removed it. */
  state: string;
  attemptsMade: number;
  attempts: number;
  chain?: ChainReplay;
}

export async function retryJob(ctx: ConsoleContext, name: string, id: string): Promise<RetriedJob> {
  const q = ctx.queues.one(name);
  const job = await jobOr404(q, id);
  const state = await job.getState();
  if (state !== 'failed' && state !== 'completed') {
    throw new InvalidStateError('not_retryable', `job "${id}" is ${state}; only failed or completed jobs can be retried`, { field: 'id' });
  }
  let chain: ChainReplay | undefined;
  if (state === 'failed') chain = await replayFailed(ctx.queues, ctx.chains, q, job);
  else {
    const rule = ctx.queues.declarationOf(q).manualAdd?.refused;
    if (rule) throw new InvalidStateError('finished_link', `job "${id}" is completed, a finished link of its chain: ${rule}`, { field: 'id' });
    await job.retry(state, REPLAY);
  }
  const now = await q.getJobState(id);
  return {
    id,
    queue: name,
    name: job.name,
    state: now === 'unknown' ? 'replaced' : now,
    attemptsMade: 0, // its attempts start over
    attempts: job.opts.attempts ?? 1,
    ...(chain ? { chain } : {}),
  };
}
