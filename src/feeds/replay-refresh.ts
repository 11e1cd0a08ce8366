/**
 * Replaying a dead refresh (the dead-job console): the refresh runs again as part of the feed's
 * one periodic chain, never as a second pending refresh beside it (feed-scheduler.ts).
 *
 * A refresh that failed for good has already been followed by its chain's next periodic job
 * (scheduled, backed off, by the failed refresh itself). Retrying the dead job would be a second
 * pending refresh of the feed; so instead the chain's pending job is brought forward to now:
 *
 *   chain's job delayed              → promoted: it runs now             'moved_forward'
 *   waiting / prioritized            → it runs soon anyway                'already_queued'
 *   active                           → it is running                      'running'
 *   no chain (lost, or dead)         → the chain is re-created, due now   'queued'
 *   the feed was deleted             → nothing                            'feed_gone'
 *
 * The dead job then leaves the failed set. The returned taskId is the job that carries the replay.
 * `job` is the dead job as the console read it (failed: src/jobs/chain-replays.ts); it is not
 * read again.
 */
import type { Job } from 'bullmq';
import type { FeedStore } from './feed-store.js';
import { QUEUED_STATES } from '../queues/job-states.js';
import type { FeedScheduler } from './feed-scheduler.js';

export interface RefreshReplay {
  jobId: string;
  status: 'moved_forward' | 'already_queued' | 'running' | 'queued' | 'feed_gone';
  taskId?: string;
}

export async function replayDeadRefresh(deps: { feeds: Pick<FeedStore, 'exists'>; scheduler: FeedScheduler }, job: Job): Promise<RefreshReplay> {
  const { scheduler } = deps;
  const jobId = job.id!;
  const feedId = Number(job.data.feedId);
  if (!(await deps.feeds.exists(feedId))) return { jobId, status: 'feed_gone' };

  let reply: RefreshReplay | undefined;
  for (let attempt = 0; attempt < 3 && !reply; attempt++) {
    const owner = await scheduler.periodicTask(feedId);
    const ownerQueue = owner ? await scheduler.queueOfJob(owner) : undefined;
    const ownerState = owner ? await ownerQueue!.getJobState(owner) : 'unknown';
    if (owner && ownerState === 'delayed') {
      const promoted = await ownerQueue!.getJob(owner).then((j) =>
        j?.promote().then(
          () => true,
          () => false,
        ),
      );
      if (promoted) reply = { jobId, status: 'moved_forward', taskId: owner };
    } else if (owner && QUEUED_STATES.has(ownerState)) reply = { jobId, status: 'already_queued', taskId: owner };
    else if (owner && ownerState === 'active') reply = { jobId, status: 'running', taskId: owner };
    else if (await scheduler.ensureChain(feedId, 0)) reply = { jobId, status: 'queued', taskId: (await scheduler.periodicTask(feedId)) ?? undefined };
  }
  if (!reply) throw new Error(`could not settle the refresh chain of feed ${feedId}`);
  await job.remove().catch(() => undefined);
  return reply;
}
