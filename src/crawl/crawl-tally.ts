/**
 * What one crawl attempt has gathered so far: its items (once per sourceId; a later sighting wins,
 * so an item seen on an on-sale page and then on a sold page is reported as sold), the pages
 * crawled, the page errors, and the progress reported after each page.
 */
import type { CrawledItem, CrawlJobPayload, CrawlPageError, CrawlResultPayload } from '../queues/payloads/crawl.js';
import { decideCrawlEnd } from './page-outcome.js';

/** Where a crawl stands, after each page (the job's progress). */
export interface CrawlProgress {
  pagesDone: number;
  pagesPlanned: number;
  items: number;
  /** Pages that failed (timeout, network, unknown) in this attempt. */
  errors: number;
  /** Blocked pages over every attempt of the task (each one delayed the task). */
  blocks: number;
  proxy: string;
}

export interface CrawlReporting {
  /** Called after each page with where the crawl stands and one line for the job's log. */
  report?: (progress: CrawlProgress, line: string) => Promise<void>;
  /** Blocks counted by the task's earlier attempts. */
  blocksBefore?: number;
}

export class CrawlTally {
  private readonly items = new Map<string, CrawledItem>();
  private readonly errors: CrawlPageError[] = [];
  private pagesCrawled = 0;
  private pagesTried = 0;

  constructor(
    private readonly task: CrawlJobPayload,
    private readonly reporting: CrawlReporting,
  ) {}

  /** No page of this attempt has been tried yet (the first one gets the human-like activity). */
  get firstPage(): boolean {
    return this.pagesTried === 0;
  }

  /** A page was fetched (whatever came of it). */
  tried(): void {
    this.pagesTried += 1;
  }

  crawled(items: readonly CrawledItem[]): void {
    this.pagesCrawled += 1;
    for (const item of items) this.items.set(item.sourceId, item);
  }

  failed(error: CrawlPageError): void {
    this.errors.push(error);
  }

  /** Reports where the crawl stands; `blocked`: this page was blocked (counted in `blocks`). */
  async report(proxy: string, line: string, blocked = 0): Promise<void> {
    const progress: CrawlProgress = {
      pagesDone: this.pagesCrawled,
      pagesPlanned: this.task.pagesOnSale + this.task.pagesSold,
      items: this.items.size,
      errors: this.errors.length,
      blocks: (this.reporting.blocksBefore ?? 0) + blocked,
      proxy,
    };
    await this.reporting.report?.(progress, line);
  }

  /** The crawl's result; throws (the attempt fails) when every page failed. */
  result(): CrawlResultPayload {
    const failed = decideCrawlEnd(this.pagesCrawled, this.errors);
    if (failed) throw failed;
    return {
      ipId: this.task.ipId,
      taskId: this.task.taskId,
      items: [...this.items.values()],
      totalFound: this.items.size,
      pagesCrawled: this.pagesCrawled,
      crawledAt: new Date().toISOString(),
      errors: this.errors,
    };
  }
}
