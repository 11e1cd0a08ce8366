/** Removing one job (DELETE /api/queues/:name/jobs/:id): any but a running one (409 `job_active`). */
import { InvalidStateError } from '../errors.js';
import type { ConsoleContext } from './console-context.js';
import { jobOr404 } from './find-job.js';

export async function removeJob(ctx: ConsoleContext, name: string, id: string): Promise<void> {
  const job = await jobOr404(ctx.queues.one(name), id);
  const state = await job.getState();
  if (state === 'active') throw new InvalidStateError('job_active', `job "${id}" is running; it cannot be deleted now`, { field: 'id' });
  await job.remove();
}
