/**
 * A little human-like activity on the first page of a crawl (reference 3.4, step 5): a few
 * mouse moves with intermediate steps and a couple of wheel scrolls with uneven pauses, then
 * back to the top so the virtual list is read from its first row (waiting until it has
 * re-rendered there). About half a second.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'puppeteer';
import { scrollToTopScript } from './browser-scripts.js';
import { VIEWPORT } from './launch-browser.js';

export async function humanize(page: Page, rowSelector: string, maxWaitMs: number, random: () => number = Math.random): Promise<void> {
  const { width, height } = page.viewport() ?? VIEWPORT;
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo));
  const moves = between(2, 4);
  for (let i = 0; i < moves; i++) {
    await page.mouse.move(between(50, width - 50), between(80, height - 80), { steps: between(4, 12) });
    await sleep(between(30, 90));
  }
  const wheels = between(1, 3);
  for (let i = 0; i < wheels; i++) {
    await page.mouse.wheel({ deltaY: between(120, 360) });
    await sleep(between(60, 160));
  }
  await page.evaluate(scrollToTopScript(rowSelector, maxWaitMs));
}
