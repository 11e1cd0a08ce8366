/**
 * One results page in real headless Chromium against the fixture marketplace:
 * - a virtual list of 120 items is read completely, each item once, although the DOM never
 *   holds more than a screenful of rows;
 * - images, fonts and analytics never reach the server (blocked inside Chromium);
 * - the stealth plugin is active (navigator.webdriver is false, no "HeadlessChrome");
 * - 403, 429, CAPTCHA, slow, broken and failing pages are classed as blocked / timeout / network;
 * - a recycled browser drains: the page open in it finishes there, new pages go to the new
 *   browser, and the old browser closes once its page is released.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createFixtureAdapter } from '../../src/crawl/adapters/fixture.js';
import { BrowserManager } from '../../src/crawl/browser-manager.js';
import { classifyError } from '../../src/crawl/classify-error.js';
import { PageBlockedError } from '../../src/crawl/crawl-errors.js';
import { CrawlMetrics } from '../../src/crawl/crawl-metrics.js';
import { fetchPage, type FetchPageInput } from '../../src/crawl/fetch-page.js';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { RequestGuard } from '../../src/crawl/request-guard.js';
import { OutboundPolicy } from '../../src/net/outbound-policy.js';
import type { BehaviourRule } from '../../src/services/fixture-marketplace/behaviour.js';
import { chromiumBrowserPids } from './chromium-processes.js';
import { waitFor } from '../support/wait.js';

describe('fetching a results page in headless Chromium', () => {
  let market: FixtureMarketplace;
  let browsers: BrowserManager;
  let profileRoot: string;
  const adapter = () => createFixtureAdapter(market.url);

  const managerFor = (root: string, pagesPerBrowser: number) =>
    new BrowserManager({
      chromiumPath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium',
      profileRoot: root,
      maxPages: 4,
      pagesPerBrowser,
      drainTimeoutMs: 60_000,
      protocolTimeoutMs: 30_000,
      logger: silentLogger(),
      metrics: new CrawlMetrics(new Metrics({ defaultMetrics: false })),
      // As the crawler role runs it: the marketplace's origin trusted, nothing else open.
      requestGuard: new RequestGuard({ policy: new OutboundPolicy(), trustedOrigins: [market.url] }),
    });

  /** The fetch options every case shares: an on-sale page of 120 items, no human-like scrolling. */
  const ON_SALE_PAGE = { status: 'on_sale', humanize: false, limit: 120, pageTimeoutMs: 15_000, networkIdleMs: 100, scrollDelayMs: 2000 } as const;

  /** Fetches one page in a fresh tab; returns the outcome or the error's class. */
  async function fetchWith(input: Partial<FetchPageInput> & { url: string }) {
    const lease = await browsers.openPage(null);
    try {
      return await fetchPage({ page: lease.page, adapter: adapter(), ...ON_SALE_PAGE, ...input });
    } finally {
      await lease.release();
    }
  }

  async function failureOf(rule: BehaviourRule, pageTimeoutMs = 15_000) {
    market.behaviour.set([rule]);
    try {
      await fetchWith({ url: adapter().searchUrl('blocked', 'on_sale', 1), pageTimeoutMs });
    } catch (err) {
      return { errorClass: classifyError(err), err };
    } finally {
      market.behaviour.set([]);
    }
    throw new Error(`the ${rule.mode} page did not fail`);
  }

  beforeAll(async () => {
    market = await FixtureMarketplace.start({ itemsPerPage: 120, pages: 5 });
    profileRoot = mkdtempSync(path.join(os.tmpdir(), 'wp-test-chromium-'));
    browsers = managerFor(profileRoot, 1000);
  });
  afterAll(async () => {
    await browsers?.close();
    await market?.stop();
    rmSync(profileRoot, { recursive: true, force: true });
  });

  it('reads all 120 items of a virtual list once, with images, fonts and analytics blocked', async () => {
    market.clearRequests();
    const out = await fetchWith({ url: adapter().searchUrl('鬼滅の刃', 'sold', 2), status: 'sold', humanize: true });
    const expected = market.catalog.page('鬼滅の刃', 'sold', 2);

    expect(out.items.map((i) => i.sourceId)).toEqual(expected.map((i) => i.sourceId));
    expect(out.items[0]).toEqual({
      sourceId: expected[0]!.sourceId,
      title: expected[0]!.title,
      price: expected[0]!.price,
      imageUrl: `${market.url}/img/${expected[0]!.sourceId}.jpg`,
      itemUrl: `${market.url}/item/${expected[0]!.sourceId}`,
      status: 'sold',
    });
    expect(out.items.every((i) => i.status === 'sold')).toBe(true);
    // the list is virtual: rows were read several times over while scrolling
    expect(out.scrolls).toBeGreaterThan(3);
    expect(out.rowsSeen).toBeGreaterThan(120);
    const log = market.requests();
    expect(log.counts.search).toBe(1);
    expect(log.counts).toMatchObject({ image: 0, font: 0, analytics: 0 });
  });

  it('keeps only a screenful of rows in the DOM and has the stealth plugin active', async () => {
    const lease = await browsers.openPage(null);
    try {
      await lease.page.goto(adapter().searchUrl('miku', 'on_sale', 1), { waitUntil: 'load' });
      const seen = (await lease.page.evaluate(
        `({ rows: document.querySelectorAll('li[data-testid="item-cell"]').length, webdriver: navigator.webdriver, ua: navigator.userAgent, chrome: typeof window.chrome })`,
      )) as { rows: number; webdriver: boolean; ua: string; chrome: string };
      expect(seen.rows).toBeGreaterThan(0);
      expect(seen.rows).toBeLessThan(40);
      expect(seen.webdriver).toBe(false);
      expect(seen.ua).not.toMatch(/HeadlessChrome/);
      expect(seen.chrome).toBe('object');
    } finally {
      await lease.release();
    }
  });

  it('reports "no more results" past the last page', async () => {
    const out = await fetchWith({ url: adapter().searchUrl('miku', 'on_sale', 6) });
    expect(out).toMatchObject({ items: [], noMoreResults: true, httpStatus: 200 });
  });

  it('classes 403, 429 and CAPTCHA pages as blocked', async () => {
    const forbidden = await failureOf({ mode: 'forbidden' });
    expect(forbidden.errorClass).toBe('blocked');
    expect((forbidden.err as Error).message).toMatch(/403/);

    const limited = await failureOf({ mode: 'rate-limited' });
    expect(limited.errorClass).toBe('blocked');
    expect((limited.err as PageBlockedError).retryAfterMs).toBe(30_000); // from Retry-After

    const captcha = await failureOf({ mode: 'captcha' });
    expect(captcha.errorClass).toBe('blocked');
    expect((captcha.err as Error).message).toMatch(/CAPTCHA/);
  });

  it('classes a page slower than the page timeout as timeout, and broken or failing pages as network', async () => {
    expect((await failureOf({ mode: 'slow', delayMs: 10_000 }, 2_000)).errorClass).toBe('timeout');
    expect((await failureOf({ mode: 'broken' })).errorClass).toBe('network');
    expect((await failureOf({ mode: 'server-error' })).errorClass).toBe('network');
    // the browser is still fine afterwards
    const out = await fetchWith({ url: adapter().searchUrl('after', 'on_sale', 1) });
    expect(out.items).toHaveLength(120);
  });

  it('drains a recycled browser: its open page finishes there, the next page gets a new browser', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'wp-test-chromium-drain-'));
    const manager = managerFor(root, 1);
    market.behaviour.set([{ mode: 'slow', delayMs: 1500, match: { keyword: 'drain' } }]);
    try {
      const first = await manager.openPage(null);
      const oldPid = manager.describe()[0]!.pid!;
      const inFlight = fetchPage({
        page: first.page,
        adapter: adapter(),
        url: adapter().searchUrl('drain', 'on_sale', 1),
        ...ON_SALE_PAGE,
      });
      await waitFor(() => market.requests().search.some((r) => r.keyword === 'drain'), { message: 'slow page never requested' });

      const second = await manager.openPage(null); // the first browser served its one page: recycle
      expect(second.browserId).not.toBe(first.browserId);
      expect(
        manager
          .describe()
          .map((b) => b.state)
          .sort(),
      ).toEqual(['draining', 'live']);
      expect(chromiumBrowserPids(root)).toContain(oldPid);

      const out = await inFlight; // finishes in the draining browser
      expect(out.items).toHaveLength(120);
      await first.release();
      await waitFor(() => !chromiumBrowserPids(root).includes(oldPid) && manager.describe().length === 1, { message: 'drained browser not closed' });
      expect(manager.describe().map((b) => b.state)).toEqual(['live']);
      await second.release();
    } finally {
      market.behaviour.set([]);
      await manager.close();
      rmSync(root, { recursive: true, force: true });
    }
    expect(chromiumBrowserPids(root)).toEqual([]);
  });
});
