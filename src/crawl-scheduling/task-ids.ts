/**
 * Crawl task ids. A task id is also the BullMQ job id of the crawl (so GET /api/tasks/:task_id
 * finds it) and names its result job (`result-<taskId>`, added by the crawler).
 *
 *   ip<ipId>-<8 hex>
 *
 * The IP id is readable from the id alone, so reconciliation can map the members of BullMQ's
 * delayed/wait/active sets to IPs without loading a single job. A chain's first task gets a
 * random suffix; each next task's suffix is derived from the previous task id (32 bits, within one
 * IP's ids: short, because every id is stored four times per pending crawl). Deriving it makes
 * "advance the chain from task T" idempotent: a pipeline worker killed after moving the chain
 * on, and the failure path of the crawl's flow racing it, all compute the same next id, and BullMQ ignores an
 * add whose job id exists.
 */
import { createHash, randomBytes } from 'node:crypto';

const TASK_ID = /^ip(\d+)-[0-9a-f]{8}$/;
const RESULT_PREFIX = 'result-';

export function newTaskId(ipId: number): string {
  return `ip${ipId}-${randomBytes(4).toString('hex')}`;
}

export function nextTaskId(ipId: number, previousTaskId: string): string {
  return `ip${ipId}-${createHash('sha1').update(previousTaskId).digest('hex').slice(0, 8)}`;
}

/** The IP of a task id, or undefined when the id is not one of ours. */
export function ipIdOfTask(taskId: string): number | undefined {
  const m = TASK_ID.exec(taskId);
  return m ? Number(m[1]) : undefined;
}

/** The job id the crawler gives the result of a task. */
export function resultJobId(taskId: string): string {
  return `${RESULT_PREFIX}${taskId}`;
}

export function taskOfResultJob(jobId: string): string | undefined {
  return jobId.startsWith(RESULT_PREFIX) ? jobId.slice(RESULT_PREFIX.length) : undefined;
}
