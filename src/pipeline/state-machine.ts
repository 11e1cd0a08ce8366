/**
 * The item state machine (reference: marketplace-crawler.md 4.2). Pure: no Redis, no clock.
 *
 * States of an item, as kept in its Redis hash `item:{ipId}:{sourceId}`:
 *   (unknown)  never seen, or its hash expired (24 h after last seen on sale, 48 h sold)
 *   on_sale    last seen listed
 *   sold       last seen sold
 *
 * Transitions, given the stored state and what a crawl saw:
 *   unknown → on_sale   new_listing   inflow +1
 *   unknown → sold      new_sold      outflow +1
 *   on_sale → sold      sold          outflow +1
 *   sold    → on_sale   relisted      (rare; not counted)
 *   on_sale → on_sale   price_change  when the price differs; else unchanged
 *   sold    → sold      unchanged     (a sold price never changes what was counted)
 */
import type { CrawledItem } from '../queues/declarations/crawl.js';

export type ItemStatus = 'on_sale' | 'sold';
export type TransitionKind = 'new_listing' | 'new_sold' | 'sold' | 'relisted' | 'price_change' | 'unchanged';

export interface StoredItemState {
  status: ItemStatus;
  price: number;
  /** Epoch milliseconds. */
  firstSeen: number;
  lastSeen: number;
}

export interface Transition {
  kind: TransitionKind;
  inflow: 0 | 1;
  outflow: 0 | 1;
  /** When the item was first seen: the stored value, or `seenAt` for a new item. */
  firstSeen: number;
}

export function transition(stored: StoredItemState | null, seen: { status: ItemStatus; price: number }, seenAt: number): Transition {
  if (!stored) {
    return seen.status === 'on_sale'
      ? { kind: 'new_listing', inflow: 1, outflow: 0, firstSeen: seenAt }
      : { kind: 'new_sold', inflow: 0, outflow: 1, firstSeen: seenAt };
  }
  const firstSeen = stored.firstSeen;
  if (stored.status === 'on_sale' && seen.status === 'sold') return { kind: 'sold', inflow: 0, outflow: 1, firstSeen };
  if (stored.status === 'sold' && seen.status === 'on_sale') return { kind: 'relisted', inflow: 0, outflow: 0, firstSeen };
  if (stored.status === 'on_sale' && stored.price !== seen.price) return { kind: 'price_change', inflow: 0, outflow: 0, firstSeen };
  return { kind: 'unchanged', inflow: 0, outflow: 0, firstSeen };
}

/** Parses an HGETALL reply; an empty or malformed hash counts as unknown. */
export function parseStoredState(hash: Record<string, string> | null | undefined): StoredItemState | null {
  if (!hash || (hash.status !== 'on_sale' && hash.status !== 'sold')) return null;
  const price = Number(hash.price);
  const firstSeen = Number(hash.first_seen);
  const lastSeen = Number(hash.last_seen);
  if (!Number.isFinite(price) || !Number.isFinite(firstSeen)) return null;
  return { status: hash.status, price, firstSeen, lastSeen: Number.isFinite(lastSeen) ? lastSeen : firstSeen };
}

/**
 * One entry per source id. An item can show up twice in one crawl (listed on an on-sale page,
 * then on a sold page as it sells); the sold sighting wins, otherwise the last one.
 */
export function dedupeItems(items: readonly CrawledItem[]): CrawledItem[] {
  const bySource = new Map<string, CrawledItem>();
  for (const item of items) {
    const seen = bySource.get(item.sourceId);
    if (seen && seen.status === 'sold' && item.status === 'on_sale') continue;
    bySource.set(item.sourceId, item);
  }
  return [...bySource.values()];
}

export interface TransitionCounts {
  new_listing: number;
  new_sold: number;
  sold: number;
  relisted: number;
  price_change: number;
  unchanged: number;
}

export interface ResultSummary {
  inflow: number;
  outflow: number;
  /** Prices of the items counted in outflow (sold and new_sold): the hour's price samples. */
  soldPrices: number[];
  counts: TransitionCounts;
}

/** Adds up one crawl's transitions: inflow, outflow, sold-price samples and counts per kind. */
export function summarize(entries: readonly { item: Pick<CrawledItem, 'price'>; transition: Transition }[]): ResultSummary {
  const counts: TransitionCounts = { new_listing: 0, new_sold: 0, sold: 0, relisted: 0, price_change: 0, unchanged: 0 };
  let inflow = 0;
  let outflow = 0;
  const soldPrices: number[] = [];
  for (const { item, transition: t } of entries) {
    counts[t.kind] += 1;
    inflow += t.inflow;
    outflow += t.outflow;
    if (t.outflow) soldPrices.push(item.price);
  }
  return { inflow, outflow, soldPrices, counts };
}
