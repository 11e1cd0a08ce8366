/**
 * One marketplace behind one interface: where a keyword's results are, how their rows read,
 * when there are no more results, and what a block looks like. Adapters are pure: they build
 * URLs and interpret what the browser read (rows, a page snapshot); the browser work is in
 * fetch-page.ts.
 */
import type { CrawledItem } from '../queues/declarations/crawl.js';

export type ItemStatus = CrawledItem['status'];

/** CSS selectors the browser uses to read result rows (see browser-scripts.ts). */
export interface RowSelectors {
  /** One result row (only the rendered ones exist: the list is virtual). */
  row: string;
  /** Attribute of the row holding the item id; the id is taken from the link otherwise. */
  idAttribute?: string;
  link: string;
  title: string;
  /** Read the title from this attribute of the title element instead of its text. */
  titleAttribute?: string;
  price: string;
  image: string;
  /** Present when the search found nothing (past the last page too). */
  noResults: string;
}

/** A row as the browser read it, before parsing. */
export interface RawRow {
  id: string | null;
  href: string | null;
  title: string | null;
  price: string | null;
  image: string | null;
}

/** What the browser saw of a loaded page, for block detection. */
export interface PageSnapshot {
  httpStatus: number;
  title: string;
  /** The start of the body text. */
  text: string;
  rowCount: number;
  noResults: boolean;
  /** A CAPTCHA / challenge widget is in the DOM. */
  challengeElement: boolean;
}

export interface SiteAdapter {
  readonly name: 'fixture' | 'mercari';
  readonly baseUrl: string;
  readonly selectors: RowSelectors;
  /** Search results of a keyword with this status, page 1-based. */
  searchUrl(keyword: string, status: ItemStatus, page: number): string;
  /** What a proxy health check fetches through the candidate proxy. */
  healthCheckUrl(): string;
  /** A parsed item, or null for a row that is not a complete item (a placeholder, an ad). */
  parseRow(raw: RawRow, status: ItemStatus): CrawledItem | null;
  /** Why the page is a block (HTTP 403/429, CAPTCHA, challenge), or null. */
  detectBlock(snapshot: PageSnapshot): string | null;
}
