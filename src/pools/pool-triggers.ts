/**
 * Asks the pools role for work: a refill of a pool, or the marking of its consumed ids. One job
 * per pool at a time (BullMQ deduplication with keepLastIfActive: a request while the job runs
 * leaves exactly one follow-up), and from the pop path at most one request per pool per
 * POOL_TRIGGER_INTERVAL_MS per process (trailing, so the last pops are always followed by one).
 * A request that cannot be sent (Redis down) is dropped: the periodic check catches up.
 */
import type { JobsOptions } from 'bullmq';
import type { Logger } from '../logging/logger.js';
import type { QueueRegistry } from '../queues/registry.js';
import type { PoolType } from './pool-item.js';
import { TrailingThrottle } from '../lib/trailing-throttle.js';
import { toError } from '../errors.js';

const RETENTION: JobsOptions = { removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } };

export class PoolTriggers {
  private readonly throttle: TrailingThrottle;

  constructor(
    private readonly queues: QueueRegistry,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.throttle = new TrailingThrottle(intervalMs);
  }

  /** Enqueues a refill of one pool (deduplicated per pool). */
  async refill(type: PoolType, groupId: number, options: { recover?: boolean } = {}): Promise<void> {
    const id = `${type}:${groupId}`;
    await this.queues.add(
      'poolRefill',
      `refill:${id}`,
      { kind: 'refill', type, groupId, ...(options.recover ? { recover: true } : {}) },
      {
        ...RETENTION,
        deduplication: { id, keepLastIfActive: true },
      },
    );
  }

  /** Enqueues the marking of one pool's consumed ids (deduplicated per pool). */
  async markConsumed(type: PoolType, groupId: number): Promise<void> {
    const id = `${type}:${groupId}`;
    await this.queues.add('poolConsumed', `consumed:${id}`, { type, groupId }, { ...RETENTION, deduplication: { id, keepLastIfActive: true } });
  }

  /** Throttled, fire-and-forget refill request from the pop path. */
  requestRefill(type: PoolType, groupId: number): void {
    this.throttle.request(`refill:${type}:${groupId}`, () => {
      this.refill(type, groupId).catch((err) => this.dropped('refill', type, groupId, err));
    });
  }

  /** Throttled, fire-and-forget marking request from the pop path. */
  requestMarkConsumed(type: PoolType, groupId: number): void {
    this.throttle.request(`consumed:${type}:${groupId}`, () => {
      this.markConsumed(type, groupId).catch((err) => this.dropped('consumed', type, groupId, err));
    });
  }

  close(): void {
    this.throttle.close();
  }

  private dropped(what: string, type: PoolType, groupId: number, err: unknown): void {
    this.logger.debug({ err: toError(err).message, type, groupId }, `pool ${what} request not sent; the periodic check will catch up`);
  }
}
