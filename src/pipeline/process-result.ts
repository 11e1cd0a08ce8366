/**
 * The result pipeline: one crawl result through its steps (docs/pipeline.md#the-pipeline-per-result):
 * idempotency, the state machine, one transaction (result-store.ts), then outside it the item
 * hashes, the chain's advance to the next crawl (closed loop) and the caches.
 *
 * Invariants (docs/pipeline.md#crash-safety): the counted effects commit with the result's
 * processed_results row, so a re-delivered result counts nothing again and only replays the steps
 * after the commit, each idempotent; the Redis hashes are written only after the commit, so a
 * crash before it leaves nothing behind and the re-run computes the same transitions.
 */
import type { Logger } from '../logging/logger.js';
import type { CrawlResultPayload } from '../queues/payloads/crawl.js';
import { type AlertCandidate } from './alert-rules.js';
import { NOTHING_COUNTED } from './first-crawl.js';
import type { ItemStateStore } from './item-state-store.js';
import type { IpStore } from '../crawl-scheduling/ip-store.js';
import type { PersistRules, ResultStore } from './result-store.js';
import type { PipelineCaches } from './pipeline-caches.js';
import type { CrawlScheduler } from '../crawl-scheduling/crawl-scheduler.js';
import { dedupeItems, summarize, transition, type TransitionCounts } from './state-machine.js';

export interface ResultOutcome {
  taskId: string;
  ipId: number;
  /**
   * processed: counted now (or, with `baseline`, recorded as the IP's first crawl); duplicate:
   * counted before (only the idempotent steps ran again); skipped: the IP is gone; crawl_failed:
   * the crawl gave no result (failed for good), the IP's next crawl is at its interval.
   */
  status: 'processed' | 'duplicate' | 'skipped' | 'crawl_failed';
  items: number;
  /** The IP's first crawl: item states and snapshots recorded, nothing counted (first-crawl.ts). */
  baseline?: boolean;
  /** Why a crawl gave no result (crawl_failed). */
  reason?: string;
  inflow?: number;
  outflow?: number;
  transitions?: TransitionCounts;
  alerts?: AlertCandidate['rule'][];
  weight?: number;
  intervalSeconds?: number;
  nextCrawlAt?: string | null;
  nextTaskId?: string | null;
}

export interface ResultPipelineDeps {
  results: ResultStore;
  ips: IpStore;
  states: ItemStateStore;
  scheduler: CrawlScheduler;
  caches: PipelineCaches;
  rules: PersistRules;
  logger: Logger;
  /** Called with each outcome (metrics). */
  onOutcome?: (outcome: ResultOutcome) => void;
}

export class ResultPipeline {
  constructor(private readonly deps: ResultPipelineDeps) {}

  async process(result: CrawlResultPayload): Promise<ResultOutcome> {
    const outcome = await this.run(result);
    this.deps.onOutcome?.(outcome);
    return outcome;
  }

  private async run(result: CrawlResultPayload): Promise<ResultOutcome> {
    const { results, states, scheduler, caches } = this.deps;
    const { taskId, ipId } = result;
    const crawledAt = Date.parse(result.crawledAt);
    const items = dedupeItems(result.items);

    if (!(await results.wasProcessed(taskId))) {
      const stored = await states.read(ipId, items);
      const entries = items.map((item, i) => ({ item, transition: transition(stored[i] ?? null, item, crawledAt) }));
      const summary = summarize(entries);
      const persisted = await results.persist({ taskId, ipId, crawledAt, items: entries, summary }, this.deps.rules);

      if (persisted.kind === 'ip_missing') {
        await scheduler.chain.release(ipId, taskId);
        return { taskId, ipId, status: 'skipped', items: items.length };
      }
      if (persisted.kind === 'persisted') {
        const { ip } = persisted;
        await states.write(ipId, items, crawledAt);
        const next = ip.active && ip.nextCrawlAt ? await scheduler.advance(ip, taskId, ip.nextCrawlAt.getTime()) : undefined;
        await caches.invalidateAfterResult(ipId);
        const counted = persisted.baseline ? NOTHING_COUNTED : summary;
        return {
          taskId,
          ipId,
          status: 'processed',
          items: items.length,
          ...(persisted.baseline ? { baseline: true } : {}),
          inflow: counted.inflow,
          outflow: counted.outflow,
          transitions: { ...counted.counts },
          alerts: persisted.alerts.map((a) => a.rule),
          weight: ip.weight,
          intervalSeconds: ip.intervalSeconds,
          nextCrawlAt: ip.nextCrawlAt?.toISOString() ?? null,
          nextTaskId: next && next.kind !== 'none' && next.kind !== 'stale' ? next.next : null,
        };
      }
      // 'duplicate': another delivery committed it while we computed; replay like below.
    }
    return this.replay(result, items.length);
  }

  /** The idempotent steps after the commit, for a result whose effects are already persisted. */
  private async replay(result: CrawlResultPayload, itemCount: number): Promise<ResultOutcome> {
    const { ips, states, scheduler, caches } = this.deps;
    const { taskId, ipId } = result;
    const ip = await ips.find(ipId);
    if (!ip) {
      await scheduler.chain.release(ipId, taskId);
      return { taskId, ipId, status: 'skipped', items: itemCount };
    }
    await states.write(ipId, dedupeItems(result.items), Date.parse(result.crawledAt));
    const next = ip.active && ip.nextCrawlAt ? await scheduler.advance(ip, taskId, ip.nextCrawlAt.getTime()) : undefined;
    await caches.invalidateAfterResult(ipId);
    this.deps.logger.info({ taskId, ipId }, 'crawl result delivered again; counted once, follow-up steps replayed');
    return {
      taskId,
      ipId,
      status: 'duplicate',
      items: itemCount,
      weight: ip.weight,
      intervalSeconds: ip.intervalSeconds,
      nextCrawlAt: ip.nextCrawlAt?.toISOString() ?? null,
      nextTaskId: next && next.kind !== 'none' && next.kind !== 'stale' ? next.next : null,
    };
  }
}
