import { describe, expect, it } from 'vitest';
import type { CrawledItem } from '../queues/declarations/crawl.js';
import { ItemCollector } from './item-collector.js';

const item = (n: number): CrawledItem => ({ sourceId: `m${n}`, title: `t${n}`, price: n, imageUrl: null, itemUrl: null, status: 'on_sale' });
const rows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => item(from + i));

describe('ItemCollector', () => {
  it('keeps overlapping reads once, in first-seen order', () => {
    const c = new ItemCollector(100);
    expect(c.add(rows(1, 20))).toBe(20);
    expect(c.add(rows(15, 35))).toBe(15);
    expect(c.items.map((i) => i.sourceId)).toEqual(rows(1, 35).map((i) => i.sourceId));
  });

  it('stops at the limit', () => {
    const c = new ItemCollector(30);
    c.add(rows(1, 20));
    expect(c.add(rows(15, 40))).toBe(10);
    expect(c.full).toBe(true);
    expect(c.items).toHaveLength(30);
  });

  it('counts reads without growth in a row, reset by growth', () => {
    const c = new ItemCollector(100);
    c.add(rows(1, 10));
    c.add(rows(1, 10));
    c.add(rows(5, 10));
    expect(c.stale).toBe(2);
    c.add(rows(5, 11));
    expect(c.stale).toBe(0);
  });
});
