/**
 * A job added by an operator (POST /api/queues/:name/jobs, Bull Board's Add), its data checked
 * against the queue's payload schema (400 naming the field). A queue whose jobs belong to a chain
 * refuses (409): a hand-made job would be a second pending crawl or refresh; its domain's route
 * schedules one the right way. A partitioned queue takes the job in the partition of its
 * business key, whichever of its partitions was named.
 */
import { ConflictError, InvalidInputError } from '../errors.js';
import { partitionKeyOf } from '../queues/definitions.js';
import type { ConsoleContext } from './console-context.js';
import { viewJob, type JobView } from './job-views.js';

export interface AddedJob {
  name?: string | undefined;
  data: unknown;
  delay?: number | undefined;
  priority?: number | undefined;
}

export async function addJob(ctx: ConsoleContext, name: string, input: AddedJob): Promise<JobView> {
  const [first] = ctx.queues.resolveOr404(name);
  const key = ctx.queues.registry.targetOf(first!).key;
  const def = ctx.queues.declarationOf(first!);
  if (def.manualAdd) throw new ConflictError('chained_queue', `jobs of "${name}" belong to a chain: ${def.manualAdd.refused}`, { field: 'name' });
  const parsed = def.payload.safeParse(input.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidInputError('invalid_payload', issue.message, { field: ['data', ...issue.path.map(String)].join('.') });
  }
  const data = parsed.data as never;
  const job = await ctx.queues.registry.add(
    key,
    input.name ?? def.name,
    data,
    {
      ...(input.delay ? { delay: input.delay } : {}),
      ...(input.priority ? { priority: input.priority } : {}),
    },
    partitionKeyOf(key, data),
  );
  return viewJob(job.queueName, job, input.delay ? 'delayed' : input.priority ? 'prioritized' : 'waiting');
}
