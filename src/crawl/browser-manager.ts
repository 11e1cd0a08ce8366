/**
 * Browsers and the pages in them (reference 3.6, browser draining).
 *
 * Every page is leased from here. At most `maxPages` pages are open at once in the process
 * (CRAWLER_CONCURRENCY); they all go to one browser, the live one.
 *
 * States of a browser:
 *   launching → live → draining → closed
 *                 └──→ crashed        (the process went away without us closing it)
 *
 * - live: takes new pages. There is at most one; before the first page and after a crash there
 *   is none and the next page launches one.
 * - draining: the browser served `pagesPerBrowser` pages, or the proxy changed. The next page
 *   launches a new browser and becomes live there; pages already open in the old browser
 *   finish in it. The old browser closes when its last page is released, or after
 *   `drainTimeoutMs` with whatever is still open (those pages then fail as timeouts).
 * - crashed: pages open in it fail; the lease says so (browserLost) so the caller can retry the
 *   whole task instead of recording half a crawl. The next page launches a new browser.
 *
 * Several callers may find the live browser due for a recycle at once: the first to look
 * replaces `live` synchronously and the others see the replacement, so one recycle launches
 * one browser.
 */
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'puppeteer';
import type { Logger } from '../logging/logger.js';
import { BrowserUnavailableError } from './crawl-errors.js';
import type { CrawlMetrics } from './crawl-metrics.js';
import { launchBrowser, type LaunchedBrowser, type LaunchOptions } from './launch-browser.js';
import type { ProxyConfig } from './proxy-url.js';
import type { RequestGuard } from './request-guard.js';
import { Semaphore } from '../lib/semaphore.js';
import { withTimeout } from '../lib/timeout.js';
import { toError } from '../errors.js';

type SlotState = 'live' | 'draining' | 'closed' | 'crashed';
type LaunchReason = 'start' | 'recycle' | 'proxy' | 'crash';

interface Slot {
  id: number;
  browser: Browser;
  pid: number | undefined;
  profileDir: string;
  proxy: ProxyConfig | null;
  state: SlotState;
  /** Pages handed out (counts towards pagesPerBrowser). */
  served: number;
  /** Pages open now. */
  active: number;
  /** Closed by the drain timeout with pages still open. */
  forced: boolean;
  launchedAt: number;
  drainTimer?: NodeJS.Timeout;
  closed?: Promise<void>;
}

export interface PageLease {
  page: Page;
  browserId: number;
  /** True when the browser under this page crashed (not when we closed it). */
  browserLost(): boolean;
  /** True when the drain timeout closed the browser under this page. */
  drainTimedOut(): boolean;
  /** Closes the page and frees its place. Idempotent. */
  release(): Promise<void>;
}

export interface BrowserInfo {
  id: number;
  pid: number | undefined;
  state: SlotState;
  proxy: string | null;
  served: number;
  active: number;
}

export interface BrowserManagerOptions {
  chromiumPath: string;
  profileRoot: string;
  maxPages: number;
  pagesPerBrowser: number;
  drainTimeoutMs: number;
  protocolTimeoutMs: number;
  logger: Logger;
  metrics: CrawlMetrics;
  /** Checks every request of every page against the outbound policy (request-guard.ts); null: none (tests of the browser itself). */
  requestGuard: RequestGuard | null;
  /** Starts a browser (default: launchBrowser with stealth). */
  launch?: (options: LaunchOptions) => Promise<LaunchedBrowser>;
}

const PAGE_OPEN_TIMEOUT_MS = 10_000;
const CLOSE_TIMEOUT_MS = 5_000;

const proxyKey = (p: ProxyConfig | null) => p?.server ?? 'direct';

export class BrowserManager {
  private live: Promise<Slot> | undefined;
  private readonly slots = new Set<Slot>();
  private readonly permits: Semaphore;
  private nextId = 1;
  private launches = 0;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BrowserManagerOptions) {
    this.permits = new Semaphore(options.maxPages);
  }

  /** Opens a page in the live browser (launching or recycling it first when due). */
  async openPage(proxy: ProxyConfig | null): Promise<PageLease> {
    if (this.closing) throw new BrowserUnavailableError('the browser manager is closed');
    await this.permits.acquire();
    let slot: Slot | undefined;
    try {
      slot = await this.liveSlot(proxy);
      slot.served += 1;
      slot.active += 1;
      this.updateGauges();
      // one window per page: a background tab of a shared window is hidden, and Chromium does
      // not render hidden pages, so their virtual lists would never re-render on scroll
      const page = await withTimeout(slot.browser.newPage({ type: 'window' }), PAGE_OPEN_TIMEOUT_MS, {
        error: () => new Error(`opening a page took longer than ${PAGE_OPEN_TIMEOUT_MS} ms`),
      });
      if (proxy?.username) await page.authenticate({ username: proxy.username, password: proxy.password ?? '' });
      await this.options.requestGuard?.install(page);
      return this.lease(slot, page);
    } catch (err) {
      if (slot) {
        // a browser that cannot open a page is not trusted with the next one: recycle it
        if (slot.state === 'live') slot.served = Number.POSITIVE_INFINITY;
        this.pageDone(slot);
      }
      this.permits.release();
      if (slot && slot.state === 'crashed') throw new BrowserUnavailableError('Chromium crashed while opening a page', { cause: err });
      throw err;
    }
  }

  /** The browsers of this process, for logs, metrics and benchmarks. */
  describe(): BrowserInfo[] {
    return [...this.slots].map((s) => ({
      id: s.id,
      pid: s.pid,
      state: s.state,
      proxy: s.proxy?.label ?? null,
      served: s.served,
      active: s.active,
    }));
  }

  /** True once close() was called: pages fail because the crawler is stopping, not because of the site. */
  get stopping(): boolean {
    return this.closing !== undefined;
  }

  /** Closes every browser at once (open pages fail). Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const pending = this.live;
      this.live = undefined;
      await pending?.catch(() => undefined); // a launch in progress is closed below
      await Promise.all([...this.slots].map((s) => this.closeSlot(s, 'shutdown')));
    })());
  }

  private async liveSlot(proxy: ProxyConfig | null): Promise<Slot> {
    for (;;) {
      const pending = this.live;
      if (!pending) {
        this.live = this.launch(proxy, this.launches === 0 ? 'start' : 'crash');
        continue;
      }
      let slot: Slot;
      try {
        slot = await pending;
      } catch (err) {
        if (this.live === pending) this.live = undefined;
        throw new BrowserUnavailableError(`Chromium could not be started: ${toError(err).message}`, { cause: err });
      }
      if (this.closing) throw new BrowserUnavailableError('the browser manager is closed');
      if (this.live !== pending) continue; // replaced while we waited
      if (slot.state !== 'live') {
        this.live = undefined; // crashed
        continue;
      }
      const due: LaunchReason | null = slot.served >= this.options.pagesPerBrowser ? 'recycle' : proxyKey(slot.proxy) !== proxyKey(proxy) ? 'proxy' : null;
      if (!due) return slot;
      this.drain(slot, due);
      this.live = this.launch(proxy, due);
    }
  }

  private async launch(proxy: ProxyConfig | null, reason: LaunchReason): Promise<Slot> {
    this.launches += 1;
    const launch = this.options.launch ?? launchBrowser;
    const started = Date.now();
    const launched = await launch({
      chromiumPath: this.options.chromiumPath,
      profileRoot: this.options.profileRoot,
      proxy,
      protocolTimeoutMs: this.options.protocolTimeoutMs,
    });
    const slot: Slot = {
      id: this.nextId++,
      browser: launched.browser,
      pid: launched.pid,
      profileDir: launched.profileDir,
      proxy,
      state: 'live',
      served: 0,
      active: 0,
      forced: false,
      launchedAt: Date.now(),
    };
    this.slots.add(slot);
    launched.browser.once('disconnected', () => this.onDisconnected(slot));
    this.options.metrics.browserLaunches.inc({ reason });
    this.options.metrics.browserLaunchDuration.observe({ reason }, (Date.now() - started) / 1000);
    this.options.logger.info({ browser: slot.id, pid: slot.pid, proxy: proxy?.label ?? 'direct', reason, launchMs: Date.now() - started }, 'browser launched');
    if (this.closing) {
      await this.closeSlot(slot, 'shutdown');
      throw new BrowserUnavailableError('the browser manager is closed');
    }
    this.updateGauges();
    return slot;
  }

  private lease(slot: Slot, page: Page): PageLease {
    let released: Promise<void> | undefined;
    return {
      page,
      browserId: slot.id,
      browserLost: () => slot.state === 'crashed' || (!slot.browser.connected && slot.state !== 'closed'),
      drainTimedOut: () => slot.forced,
      release: () =>
        (released ??= (async () => {
          if (slot.browser.connected)
            await withTimeout(page.close(), CLOSE_TIMEOUT_MS, { error: () => new Error(`closing a page took longer than ${CLOSE_TIMEOUT_MS} ms`) }).catch(
              () => undefined,
            );
          this.pageDone(slot);
          this.permits.release();
        })()),
    };
  }

  private pageDone(slot: Slot): void {
    slot.active -= 1;
    this.updateGauges();
    if (slot.state === 'draining' && slot.active === 0) void this.closeSlot(slot, 'drained');
  }

  private drain(slot: Slot, reason: LaunchReason): void {
    slot.state = 'draining';
    this.options.logger.info({ browser: slot.id, reason, served: slot.served, inFlight: slot.active }, 'browser draining');
    if (slot.active === 0) {
      void this.closeSlot(slot, 'drained');
      return;
    }
    slot.drainTimer = setTimeout(() => {
      this.options.logger.warn(
        { browser: slot.id, inFlight: slot.active, drainTimeoutMs: this.options.drainTimeoutMs },
        'drain timeout: closing the browser with pages still open',
      );
      slot.forced = true;
      void this.closeSlot(slot, 'drain timeout');
    }, this.options.drainTimeoutMs);
    slot.drainTimer.unref();
    this.updateGauges();
  }

  private closeSlot(slot: Slot, why: string): Promise<void> {
    if (slot.closed) return slot.closed;
    if (slot.drainTimer) clearTimeout(slot.drainTimer);
    const wasCrashed = slot.state === 'crashed';
    slot.state = wasCrashed ? 'crashed' : 'closed';
    slot.closed = (async () => {
      if (!wasCrashed) {
        const closed = await withTimeout(slot.browser.close(), CLOSE_TIMEOUT_MS, {
          error: () => new Error(`closing the browser took longer than ${CLOSE_TIMEOUT_MS} ms`),
        }).then(
          () => true,
          () => false,
        );
        if (!closed && slot.pid) {
          try {
            process.kill(slot.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
      // Chromium may still be flushing its profile for a moment after close
      await removeDir(slot.profileDir);
      this.slots.delete(slot);
      this.updateGauges();
      this.options.logger.debug({ browser: slot.id, why, served: slot.served, aliveMs: Date.now() - slot.launchedAt }, 'browser closed');
    })();
    return slot.closed;
  }

  private onDisconnected(slot: Slot): void {
    if (slot.state === 'closed' || slot.closed) return;
    slot.state = 'crashed';
    this.options.metrics.browserCrashes.inc();
    this.options.logger.warn({ browser: slot.id, pid: slot.pid, inFlight: slot.active }, 'browser crashed; the next page starts a new one');
    void this.closeSlot(slot, 'crashed');
  }

  private updateGauges(): void {
    let live = 0;
    let draining = 0;
    let open = 0;
    for (const s of this.slots) {
      if (s.state === 'live') live += 1;
      if (s.state === 'draining') draining += 1;
      if (s.state === 'live' || s.state === 'draining') open += s.active;
    }
    this.options.metrics.browsers.set({ state: 'live' }, live);
    this.options.metrics.browsers.set({ state: 'draining' }, draining);
    this.options.metrics.pagesOpen.set(open);
  }
}

async function removeDir(dir: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch {
      await sleep(200);
    }
  }
}
