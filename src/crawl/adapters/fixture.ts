/**
 * The local fixture marketplace (src/services/fixture-marketplace): same URL scheme and row markup
 * as the real site, served from 127.0.0.1 for tests, the demo and benchmarks.
 */
import { detectBlock } from '../detect-block.js';
import { parseRow } from '../parse-row.js';
import type { ItemStatus, SiteAdapter } from '../site-adapter.js';

export function createFixtureAdapter(baseUrl: string): SiteAdapter {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    name: 'fixture',
    baseUrl: base,
    selectors: {
      row: 'li[data-testid="item-cell"]',
      idAttribute: 'data-item-id',
      link: 'a[data-testid="thumbnail-link"]',
      title: '[data-testid="item-name"]',
      price: '[data-testid="item-price"]',
      image: 'img',
      noResults: '[data-testid="search-no-results"]',
    },
    searchUrl(keyword: string, status: ItemStatus, page: number): string {
      const q = new URLSearchParams({ keyword, status: status === 'sold' ? 'sold_out' : 'on_sale', page: String(page) });
      return `${base}/search?${q}`;
    },
    healthCheckUrl: () => `${base}/`,
    parseRow: (raw, status) => parseRow(raw, status, base),
    detectBlock: (snapshot) => detectBlock(snapshot),
  };
}
