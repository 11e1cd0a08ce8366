import type { SiteAdapter } from '../site-adapter.js';
import { createFixtureAdapter } from './fixture.js';
import { createMercariAdapter, MERCARI_BASE_URL } from './mercari.js';

/**
 * The adapter CRAWL_SITE names, on `baseUrl`. For the fixture, the runtime resolves the
 * "embedded" base URL to the marketplace it serves (src/runtime/crawler-role.ts) before this is called.
 */
export function createSiteAdapter(site: string, baseUrl: string): SiteAdapter {
  if (site === 'mercari') return createMercariAdapter(/^https?:\/\//.test(baseUrl) ? baseUrl : MERCARI_BASE_URL);
  if (site === 'fixture') return createFixtureAdapter(baseUrl);
  throw new Error(`CRAWL_SITE: no site adapter named "${site}" (fixture, mercari)`);
}
