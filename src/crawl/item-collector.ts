/**
 * Collects the items of one results page while its virtual list is scrolled: every read sees
 * the rows rendered at that moment, overlapping the previous read; items are kept once by
 * sourceId, in first-seen order, up to the limit. `stale` counts the reads in a row that added
 * nothing, which ends the scrolling (reference 3.5: three scrolls without growth).
 */
import type { CrawledItem } from '../queues/declarations/crawl.js';

export class ItemCollector {
  private readonly byId = new Map<string, CrawledItem>();
  private staleReads = 0;

  constructor(readonly limit: number) {}

  /** Adds what one read saw; returns how many items were new. */
  add(items: CrawledItem[]): number {
    let added = 0;
    for (const item of items) {
      if (this.full) break;
      if (this.byId.has(item.sourceId)) continue;
      this.byId.set(item.sourceId, item);
      added += 1;
    }
    this.staleReads = added > 0 ? 0 : this.staleReads + 1;
    return added;
  }

  get full(): boolean {
    return this.byId.size >= this.limit;
  }

  /** Reads in a row that added nothing. */
  get stale(): number {
    return this.staleReads;
  }

  get items(): CrawledItem[] {
    return [...this.byId.values()];
  }
}
