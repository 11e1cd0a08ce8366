/**
 * Resource blocking (reference 3.4, step 3): a results page needs its document, scripts,
 * styles and data requests; images, fonts, media and analytics/tracking calls are refused.
 *
 * The refusal happens inside Chromium (CDP Network.setBlockedURLs, the reference's
 * blockURLs), not by request interception: a virtual list asks for a new batch of thumbnails on
 * every scroll, and intercepting each one would cost a round trip to this process.
 *
 * The crawler's other refusal, the outbound policy (request-guard.ts), does use interception:
 * it must resolve each host when the request is made. The two never decide the same request:
 * Chromium refuses a listed URL before interception pauses it, so the guard judges only what this
 * list lets through (test/security/crawler-requests.test.ts). Both stay: this list folded into
 * the interception handler (measured on the fixture's results page, about 205 refusals a page)
 * made each page cost some 150 ms more CPU in this process and 0.7 to 1.3 s more in Chromium.
 * Puppeteer keeps the `requestWillBeSent` event of each URL refused here until its page closes
 * (after one results page) and reports none of them as failed: nothing reads either.
 * Patterns use Chromium's wildcard syntax ('*' matches anything) against the whole URL.
 */
import type { Page } from 'puppeteer';

export const BLOCKED_URL_PATTERNS = [
  // images
  ...['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp'].map((ext) => `*.${ext}*`),
  // fonts and media
  ...['woff', 'woff2', 'ttf', 'otf', 'eot', 'mp4', 'webm', 'mp3', 'm3u8'].map((ext) => `*.${ext}*`),
  '*fonts.googleapis.com*',
  '*fonts.gstatic.com*',
  // analytics and tracking
  '*google-analytics.com*',
  '*googletagmanager.com*',
  '*doubleclick.net*',
  '*googlesyndication.com*',
  '*facebook.net*',
  '*hotjar.com*',
  '*segment.io*',
  '*newrelic.com*',
  '*nr-data.net*',
  '*datadoghq*',
  '*sentry.io*',
  '*clarity.ms*',
  '*criteo*',
  '*/analytics.js*',
  '*/analytics/*',
  '*/beacon*',
];

const patterns = BLOCKED_URL_PATTERNS.map(
  (p) =>
    new RegExp(
      `^${p
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
        .join('.*')}$`,
    ),
);

/** Whether Chromium will refuse this URL (the same wildcard match, for tests and logs). */
export function isBlockedUrl(url: string): boolean {
  return patterns.some((re) => re.test(url));
}

export async function enableResourceBlocking(page: Page): Promise<void> {
  const session = await page.createCDPSession();
  await session.send('Network.enable');
  await session.send('Network.setBlockedURLs', { urls: BLOCKED_URL_PATTERNS });
}
