/** The pools' collaborators, built by wirePools (wiring.ts), one set per process and role. */
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolMetrics } from './pool-metrics.js';
import type { PoolRows } from './pool-rows.js';
import type { PoolTriggers } from './pool-triggers.js';

export interface PoolDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: Config['pools'];
  metrics: PoolMetrics;
  logger: Logger;
}
