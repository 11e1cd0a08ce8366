/**
 * The item state hashes in Redis, `item:{ipId}:{sourceId}` with fields status, price,
 * first_seen, last_seen (epoch ms). Read and written in batches (PIPELINE_STATE_BATCH_SIZE,
 * default 500): all reads of a batch are one pipeline round trip (HGETALL each), all writes of
 * a batch are one round trip (one script over the batch's keys; they share the IP's hash tag,
 * so the script is Cluster-safe).
 *
 * Writes are replay-safe: a hash is only written when its stored last_seen is not newer than the
 * crawl being written, and first_seen is kept. Writing the same crawl again (a re-delivered
 * result) rewrites the same values; an older crawl arriving late changes nothing.
 */
import type { CrawledItem } from '../queues/declarations/crawl.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import { parseStoredState, type StoredItemState } from './state-machine.js';

const writeStates = RedisScript.load('item-state-write', new URL('./item-state-write.lua', import.meta.url), {
  keys: [],
  args: ['seenAt', 'ttlOnSaleSeconds', 'ttlSoldSeconds'],
});

export interface ItemStateStoreOptions {
  batchSize: number;
  ttlOnSaleSeconds: number;
  ttlSoldSeconds: number;
}

export class ItemStateStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly options: ItemStateStoreOptions,
  ) {}

  /** Stored state of each item (null when unknown), in input order. */
  async read(ipId: number, items: readonly Pick<CrawledItem, 'sourceId'>[]): Promise<(StoredItemState | null)[]> {
    const out: (StoredItemState | null)[] = [];
    for (let i = 0; i < items.length; i += this.options.batchSize) {
      const batch = items.slice(i, i + this.options.batchSize);
      const pipeline = this.redis.pipeline();
      for (const item of batch) pipeline.hgetall(this.keys.itemState(ipId, item.sourceId));
      const replies = (await pipeline.exec()) ?? [];
      for (const [err, hash] of replies) {
        if (err) throw err;
        out.push(parseStoredState(hash as Record<string, string>));
      }
    }
    return out;
  }

  /** Writes what a crawl saw at `seenAt`. Returns how many hashes were written. */
  async write(ipId: number, items: readonly Pick<CrawledItem, 'sourceId' | 'status' | 'price'>[], seenAt: number): Promise<number> {
    let written = 0;
    const { ttlOnSaleSeconds, ttlSoldSeconds } = this.options;
    for (let i = 0; i < items.length; i += this.options.batchSize) {
      const batch = items.slice(i, i + this.options.batchSize);
      written += await writeStates.run<number>(
        this.redis,
        {},
        { seenAt, ttlOnSaleSeconds, ttlSoldSeconds },
        { keys: batch.map((item) => this.keys.itemState(ipId, item.sourceId)), args: batch.flatMap((item) => [item.status, item.price]) },
      );
    }
    return written;
  }
}
