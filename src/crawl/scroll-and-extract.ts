/**
 * Reads a virtual list (reference 3.5): read the rendered rows, scroll one screen, wait for the
 * list to re-render, read again, until the page's limit is reached or three scrolls in a row
 * bring no new item. The reference sleeps a fixed 500 ms per scroll; here that is the longest
 * wait, and a list that re-renders sooner is read sooner.
 */
import type { Page } from 'puppeteer';
import type { CrawledItem } from '../queues/declarations/crawl.js';
import { readRowsScript, scrollOneScreenScript } from './browser-scripts.js';
import { ItemCollector } from './item-collector.js';
import type { ItemStatus, RawRow, SiteAdapter } from './site-adapter.js';

export const SCROLLS_WITHOUT_GROWTH = 3;
/** A guard against pages that never stop growing; the page deadline bounds time as well. */
const MAX_SCROLLS = 1000;

export interface ExtractOptions {
  limit: number;
  /** Longest wait after a scroll for the rows to change. */
  scrollDelayMs: number;
}

export interface Extracted {
  items: CrawledItem[];
  /** Rows read, including repeats and rows that did not parse. */
  rowsSeen: number;
  scrolls: number;
}

export async function scrollAndExtract(page: Page, adapter: SiteAdapter, status: ItemStatus, options: ExtractOptions): Promise<Extracted> {
  const collector = new ItemCollector(options.limit);
  const readRows = readRowsScript(adapter.selectors);
  const scroll = scrollOneScreenScript(adapter.selectors.row, options.scrollDelayMs);
  let rowsSeen = 0;
  let scrolls = 0;
  for (;;) {
    const rows = (await page.evaluate(readRows)) as RawRow[];
    rowsSeen += rows.length;
    collector.add(rows.map((r) => adapter.parseRow(r, status)).filter((i): i is CrawledItem => i !== null));
    if (collector.full || scrolls >= MAX_SCROLLS) break;
    if (scrolls > 0 && collector.stale >= SCROLLS_WITHOUT_GROWTH) break;
    await page.evaluate(scroll);
    scrolls += 1;
  }
  return { items: collector.items, rowsSeen, scrolls };
}
