/**
 * Turns a row read from a results page into a crawled item. Shared by the adapters: the id
 * comes from the row's id attribute or the last segment of its link; the price is the digits
 * of the price text (¥1,234 → 1234). A row without an id or a price is not an item yet (a
 * placeholder still loading, an ad) and is skipped.
 */
import type { CrawledItem } from '../queues/declarations/crawl.js';
import type { ItemStatus, RawRow } from './site-adapter.js';

export function parsePrice(text: string | null): number | null {
  if (!text) return null;
  const digits = text.replace(/[^\d]/g, '');
  if (!digits) return null;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : null;
}

export function idFromHref(href: string | null): string | null {
  if (!href) return null;
  try {
    const segments = new URL(href, 'http://x.invalid').pathname.split('/').filter(Boolean);
    return segments.at(-1) ?? null;
  } catch {
    return null;
  }
}

function absolute(url: string | null, baseUrl: string): string | null {
  if (!url) return null;
  try {
    return new URL(url, baseUrl).toString();
  } catch {
    return null;
  }
}

export function parseRow(raw: RawRow, status: ItemStatus, baseUrl: string): CrawledItem | null {
  const sourceId = (raw.id?.trim() || idFromHref(raw.href))?.trim();
  const price = parsePrice(raw.price);
  if (!sourceId || price === null) return null;
  return {
    sourceId,
    title: (raw.title ?? '').replace(/\s+/g, ' ').trim(),
    price,
    imageUrl: absolute(raw.image, baseUrl),
    itemUrl: absolute(raw.href, baseUrl),
    status,
  };
}
