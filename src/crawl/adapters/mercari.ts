/**
 * jp.mercari.com. Search results are a client-rendered virtual list; pages after the first are
 * addressed by `page_token=v1:<n-1>`; sold items by `status=sold_out`.
 *
 * The selectors follow the site's data-testid attributes as they were last known; no test can
 * reach the live site, so a markup change shows up as pages with zero rows (and no
 * "no results" marker), which the crawl records as page errors of class unknown.
 */
import { detectBlock } from '../detect-block.js';
import { parseRow } from '../parse-row.js';
import type { ItemStatus, SiteAdapter } from '../site-adapter.js';

export const MERCARI_BASE_URL = 'https://jp.mercari.com';

const MERCARI_BLOCK_WORDING = [/アクセスが制限/, /しばらく時間をおいて/, /ロボットではありません/];

export function createMercariAdapter(baseUrl = MERCARI_BASE_URL): SiteAdapter {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    name: 'mercari',
    baseUrl: base,
    selectors: {
      row: 'li[data-testid="item-cell"]',
      link: 'a[data-testid="thumbnail-link"]',
      title: '[data-testid="thumbnail-item-name"]',
      price: '[class*="merPrice"] [class*="number"], [class*="merPrice"]',
      image: 'img',
      noResults: '[data-testid="search-result-empty"], [data-testid="empty-state"]',
    },
    searchUrl(keyword: string, status: ItemStatus, page: number): string {
      const q = new URLSearchParams({
        keyword,
        status: status === 'sold' ? 'sold_out' : 'on_sale',
        sort: 'created_time',
        order: 'desc',
      });
      if (page > 1) q.set('page_token', `v1:${page - 1}`);
      return `${base}/search?${q}`;
    },
    healthCheckUrl: () => `${base}/`,
    parseRow: (raw, status) => parseRow(raw, status, base),
    detectBlock: (snapshot) => detectBlock(snapshot, MERCARI_BLOCK_WORDING),
  };
}
