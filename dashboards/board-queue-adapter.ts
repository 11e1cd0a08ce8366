/**
 * Bull Board's view of one platform queue: BullMQ's adapter, told what the platform knows.
 *
 * - The queue's description and its payload as a JSON Schema (the "Add job" form's template and
 *   checks; the server checks it again: board-actions.ts).
 * - Completed jobs of a chain offer no "Retry" (a finished link run again fails as stale, or is a
 *   second pending refresh); the server refuses it too (src/queues/job-inspector.ts).
 * - A crawl shows its flow from its own page too. Bull Board finds a job's flow by following
 *   `job.opts.parent` up to the root. A pending crawl is a plain delayed job that the crawler
 *   attaches to its parent (`result-<taskId>`) when it takes it (src/crawl/crawl-flow.ts); BullMQ
 *   then records the parent in the job's `parent`/`parentKey` fields but not in its stored
 *   options, so the board saw a crawl as a flow of its own with no children (`isFlowNode: false`).
 *   Jobs read here carry their recorded parent in `opts.parent` as well.
 */
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { queues, type QueueKey } from '../src/queues/definitions.js';
import { chainRule } from './board-rules.js';

type AdapterOptions = NonNullable<ConstructorParameters<typeof BullMQAdapter>[1]>;

/** The queue's payload schema as JSON Schema (draft 7, what the board's form reads). */
export function jobDataSchema(key: QueueKey): Record<string, unknown> {
  return z.toJSONSchema(queues[key].payload, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** A job attached to a parent after it was added: its parent in `opts.parent`, where Bull Board looks. */
export function withRecordedParent<J extends Job | undefined>(job: J): J {
  const parent = job?.parent;
  if (job && parent?.id && !job.opts.parent) job.opts.parent = { id: parent.id, queue: parent.queueKey };
  return job;
}

export class PlatformQueueAdapter extends BullMQAdapter {
  constructor(queue: Queue, key: QueueKey) {
    const options: AdapterOptions & { allowCompletedRetries: boolean } = {
      delimiter: '.', // partitions (crawl.0, crawl.1, ...) grouped under their queue
      description: queues[key].description,
      jobDataSchema: jobDataSchema(key),
      allowCompletedRetries: !chainRule(key),
    };
    super(queue, options);
  }

  override async getJob(id: string): Promise<Job | undefined> {
    return withRecordedParent(await super.getJob(id));
  }
}
