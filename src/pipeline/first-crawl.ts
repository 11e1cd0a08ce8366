/**
 * First-crawl detection (reference: marketplace-crawler.md 4.1, "首次爬取检测"). Pure.
 *
 * The state machine counts an item it holds no state for as new: new_listing (inflow) or
 * new_sold (outflow). On an IP's first crawl every item is unknown, so counting would book the
 * whole marketplace as one hour's inflow and outflow, move the weight and fire high_liquidity.
 * A baseline crawl therefore records what it saw (item states, snapshots, lastCrawledAt, next
 * crawl) and counts nothing: no transitions, no hourly stats, no alerts, the weight unchanged.
 *
 * A crawl is a baseline when the IP was never crawled, or when its last crawl is older than the
 * on-sale item state TTL (ANALYZER_ITEM_TTL_AVAILABLE): the states it would be compared with have
 * expired (an IP paused for days, a platform down that long), so it is a first crawl again. The
 * decision is taken inside the result's transaction, on the IP row it locks.
 */
import type { ResultSummary } from './state-machine.js';

export function isBaselineCrawl(lastCrawledAt: Date | null, crawledAt: number, itemTtlOnSaleSeconds: number): boolean {
  return lastCrawledAt === null || crawledAt - lastCrawledAt.getTime() > itemTtlOnSaleSeconds * 1000;
}

/** What a baseline crawl counts. */
export const NOTHING_COUNTED: ResultSummary = Object.freeze({
  inflow: 0,
  outflow: 0,
  soldPrices: [],
  counts: { new_listing: 0, new_sold: 0, sold: 0, relisted: 0, price_change: 0, unchanged: 0 },
}) as ResultSummary;
