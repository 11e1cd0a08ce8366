/**
 * The flow of one crawl (see process-crawl-job.ts): parent `result-<taskId>` on `crawl-result`
 * (the processing of the result; data: ipId and taskId), child the crawl job `<taskId>` on
 * `crawl`, in the same partition. Opened by the crawler when it takes the crawl, on every attempt: adding the flow finds
 * the crawl's id taken and attaches the existing job to the parent (a no-op once attached), and
 * the parent's id is derived from the task id, so the flow is opened once however often this runs.
 */
import type { Job } from 'bullmq';
import type { CrawlJobPayload } from '../queues/declarations/crawl.js';
import type { QueueTarget } from '../queues/layout.js';
import type { QueueRegistry } from '../queues/registry.js';

/** The id of the job that processes the result of crawl `taskId`. */
export const resultJobId = (taskId: string) => `result-${taskId}`;

const FINISHED = new Set(['completed', 'failed']);

/**
 * Opens the crawl's flow. Returns false when the parent had already finished: this crawl is a
 * re-run of a link whose result (or failure) was processed (a dead crawl retried by hand, e.g.
 * in Bull Board); its result would reach nobody, so the caller does not crawl.
 */
export async function openCrawlFlow(queues: QueueRegistry, job: Job<CrawlJobPayload>, from: QueueTarget): Promise<boolean> {
  const { ipId, taskId } = job.data;
  const parentId = resultJobId(taskId);
  // The parent goes to the crawl-result partition beside the crawl's own queue (one hash tag),
  // also when the crawl was taken from an older layout being drained.
  await queues.addFlow(
    { queue: 'crawlResult', name: 'result', data: { ipId, taskId }, opts: { jobId: parentId } },
    [{ queue: 'crawl', name: job.name, data: job.data, opts: { jobId: job.id!, ignoreDependencyOnFailure: true } }],
    { alongside: from },
  );
  return !FINISHED.has(await queues.at(queues.layout.sibling(from, 'crawlResult')).getJobState(parentId));
}
