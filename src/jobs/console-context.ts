/** What every operation of the job console works with (src/jobs/job-console.ts builds it once). */
import type { RedisClient } from '../redis/connection.js';
import type { ChainHandlers } from './chain-replays.js';
import type { ConsoleQueues } from './console-queues.js';

export interface ConsoleContext {
  queues: ConsoleQueues;
  /** For reads BullMQ has no getter for (due times, the failed set with scores). */
  redis: RedisClient;
  chains: ChainHandlers;
}
