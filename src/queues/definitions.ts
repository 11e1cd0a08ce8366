/**
 * Every queue of the platform: the declarations of each family (src/queues/declarations/), by
 * key. Bull Board, /api/queues, the metrics, the layout and the job console read them from here;
 * a queue added to its family's declarations is everywhere at once.
 */
import type { z } from 'zod';
import { crawlQueues } from './declarations/crawl.js';
import { feedQueues } from './declarations/feeds.js';
import { maintenanceQueues } from './declarations/maintenance.js';
import { messageQueues } from './declarations/messages.js';
import { poolQueues } from './declarations/pools.js';
import type { PartitionKey, QueueDeclaration } from './declare-queue.js';

export type { QueueFamily, WorkerRole } from './declare-queue.js';

export const queues = { ...feedQueues, ...crawlQueues, ...poolQueues, ...messageQueues, ...maintenanceQueues };

export type QueueKey = keyof typeof queues;
export type QueueName = (typeof queues)[QueueKey]['name'];
export type PayloadOf<K extends QueueKey> = z.infer<(typeof queues)[K]['payload']>;
/** Any queue's declaration. */
export type QueueDefinition = QueueDeclaration;

export const queueKeys = Object.keys(queues) as QueueKey[];
export const queueList: QueueDefinition[] = Object.values(queues);

/** The key of the registered queue named `name` (`feed-refresh` → feedRefresh), or undefined. */
export function findQueueKey(name: string): QueueKey | undefined {
  return queueKeys.find((k) => queues[k].name === name);
}

/** The business key of a job's payload (the partition it belongs to), undefined for a queue of a family that is not partitioned. */
export function partitionKeyOf<K extends QueueKey>(key: K, payload: PayloadOf<K>): PartitionKey | undefined {
  const def: QueueDefinition = queues[key];
  return def.partitionKey?.(payload);
}
