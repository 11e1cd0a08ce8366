/**
 * The queues a name in the job console stands for. A registered queue's name (`crawl`) means all
 * of its queues: every partition (QUEUE_SHARDS) and those of older layouts still draining, also
 * when one of them carries that very name; a partition's name (`crawl.3-of-6`) means that one.
 * Operations on one job need one queue: a partitioned queue's name there is a 404 naming its
 * partitions.
 */
import type { Queue } from 'bullmq';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { findQueueKey, queues as declarations, type QueueDefinition } from '../queues/definitions.js';
import type { QueueRegistry } from '../queues/registry.js';

export class ConsoleQueues {
  constructor(readonly registry: QueueRegistry) {}

  /** Every queue `name` stands for, or undefined when it names none. */
  resolve(name: string): Queue[] | undefined {
    const key = findQueueKey(name);
    if (key) return this.registry.everywhere(key);
    const q = this.registry.byName(name);
    return q ? [q] : undefined;
  }

  /** Every queue `name` stands for, or a 404 `unknown_queue` (the name in the path). */
  resolveOr404(name: string): Queue[] {
    const qs = this.resolve(name);
    if (!qs) throw new NotFoundError('unknown_queue', `no queue named "${name}"`, { field: 'name' });
    return qs;
  }

  /** Every queue `name` stands for, or a 400 `unknown_queue` (the name in a filter). */
  resolveOr400(name: string): Queue[] {
    const qs = this.resolve(name);
    if (!qs) throw new InvalidInputError('unknown_queue', `no queue named "${name}"`, { field: 'queue' });
    return qs;
  }

  /** The one queue `name` names, or a 404 (`partitioned_queue` naming the partitions, else `unknown_queue`). */
  one(name: string): Queue {
    const q = this.registry.byName(name);
    if (q) return q;
    const all = this.resolve(name);
    if (all) throw new NotFoundError('partitioned_queue', `"${name}" has partitions: name one of ${all.map((x) => x.name).join(', ')}`, { field: 'name' });
    throw new NotFoundError('unknown_queue', `no queue named "${name}"`, { field: 'name' });
  }

  /** The declaration of the registered queue a (partition) queue belongs to. */
  declarationOf(q: Queue): QueueDefinition {
    return declarations[this.registry.targetOf(q).key];
  }

  /** The registered queue's name a (partition) queue belongs to: `crawl` for `crawl.3-of-6`. */
  familyName(q: Queue): string {
    return this.declarationOf(q).name;
  }
}
