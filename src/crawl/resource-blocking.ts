/**
 * Request interception: a results page needs its document, scripts, styles and data requests;
 * images, fonts, media and analytics/tracking calls are aborted (reference 3.4: fewer bytes,
 * faster idle, fewer beacons that identify the crawler).
 */
import type { HTTPRequest, Page } from 'puppeteer';

const BLOCKED_TYPES = new Set(['image', 'media', 'font', 'ping', 'manifest', 'texttrack']);
const TRACKING = /google-analytics\.com|googletagmanager\.com|doubleclick\.net|googlesyndication\.com|facebook\.net|connect\.facebook|hotjar\.com|segment\.(io|com)|newrelic\.com|nr-data\.net|datadoghq|sentry\.io|clarity\.ms|criteo|\/analytics([/.?]|$)|\/collect([/?]|$)|\/beacon([/?]|$)/i;

export function shouldBlockRequest(resourceType: string, url: string): boolean {
  return BLOCKED_TYPES.has(resourceType) || TRACKING.test(url);
}

export async function enableResourceBlocking(page: Page): Promise<void> {
  await page.setRequestInterception(true);
  page.on('request', (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    const blocked = shouldBlockRequest(req.resourceType(), req.url());
    (blocked ? req.abort('blockedbyclient') : req.continue()).catch(() => undefined);
  });
}
