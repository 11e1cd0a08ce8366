/**
 * What the shared config holds, and where it comes from: the pool groups with live rows, read
 * through the pools' store. The coordination (src/coordination) publishes and follows whatever
 * this computes; it reads no domain's tables itself. IPs and their weights are not in it: they
 * change with almost every crawl result, and every process would reload them every round.
 */
import type { SharedConfigContent } from '../coordination/shared-config.js';
import type { Database } from '../db/client.js';
import { PoolRows } from '../pools/pool-rows.js';

/** The function the leader (every CONFIG_REFRESH_INTERVAL_MS) and a process cut off from Redis compute the shared config with. */
export function sharedConfigContent(db: Pick<Database, 'pool'>): () => Promise<SharedConfigContent> {
  const rows = new PoolRows(db.pool);
  return async () => {
    const [titles, contents] = await Promise.all([rows.liveGroupIds('titles'), rows.liveGroupIds('contents')]);
    return { poolGroups: { titles, contents } };
  };
}
