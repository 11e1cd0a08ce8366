import { describe, expect, it } from 'vitest';
import { isBaselineCrawl } from './first-crawl.js';

const DAY = 86_400;
const at = (iso: string) => Date.parse(iso);

describe('first-crawl detection', () => {
  it('takes a never-crawled IP as a baseline', () => {
    expect(isBaselineCrawl(null, at('2026-01-02T00:00:00Z'), DAY)).toBe(true);
  });

  it('compares with the states of a recent crawl', () => {
    expect(isBaselineCrawl(new Date('2026-01-01T22:00:00Z'), at('2026-01-02T00:00:00Z'), DAY)).toBe(false);
    expect(isBaselineCrawl(new Date('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z'), DAY)).toBe(false);
  });

  it('takes a crawl after the on-sale states expired as a baseline again', () => {
    expect(isBaselineCrawl(new Date('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:01Z'), DAY)).toBe(true);
  });

  it('never takes an older result (a late re-delivery) as a baseline', () => {
    expect(isBaselineCrawl(new Date('2026-01-02T00:00:00Z'), at('2026-01-01T23:00:00Z'), DAY)).toBe(false);
  });
});
