/**
 * Replaying a dead job: it gets its full attempts again. A queue whose jobs form a chain (one
 * pending crawl per IP, one pending refresh per feed) registers a replay handler, so that the
 * replayed job takes its place in the chain instead of becoming a second pending job; other
 * queues' jobs are simply retried. A chain may register a promote handler too, which runs a
 * delayed job now through its chain. Handlers are registered by the registered queue's name
 * (src/runtime/api-wiring.ts).
 *
 * A handler gets the job as the console read it (its state checked), and reads it no more.
 */
import type { Job, Queue } from 'bullmq';
import type { ConsoleQueues } from './console-queues.js';

/** Where a replay put a job's work: its chain's status and the task that carries it on. */
export interface ChainReplay {
  status: string;
  taskId?: string;
}

/** Puts a failed job back into its chain, with its full attempts. */
export type ReplayHandler = (job: Job) => Promise<ChainReplay>;

/** Runs a delayed job of a chain now, through its chain. */
export type PromoteHandler = (job: Job) => Promise<ChainReplay>;

export interface ChainHandlers {
  /** Replay handlers by queue name. */
  replay?: ReadonlyMap<string, ReplayHandler>;
  /** Promote handlers by queue name. */
  promote?: ReadonlyMap<string, PromoteHandler>;
}

/** Options of a replayed job: its attempts start over. */
export const REPLAY = { resetAttemptsMade: true, resetAttemptsStarted: true } as const;

/** Replays a job of `q` read as failed: through its chain's handler (what became of it), else retried in place (undefined). */
export async function replayFailed(queues: ConsoleQueues, handlers: ChainHandlers, q: Queue, job: Job): Promise<ChainReplay | undefined> {
  const handler = handlers.replay?.get(queues.familyName(q));
  if (handler) return handler(job);
  await job.retry('failed', REPLAY);
  return undefined;
}
