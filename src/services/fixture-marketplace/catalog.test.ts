import { describe, expect, it } from 'vitest';
import { FixtureCatalog } from './catalog.js';

describe('FixtureCatalog', () => {
  it('is deterministic per seed and keyword, with unique ids across both statuses', () => {
    const a = new FixtureCatalog({ itemsPerPage: 10, pages: 2 });
    const b = new FixtureCatalog({ itemsPerPage: 10, pages: 2 });
    expect(a.page('ado', 'on_sale', 1)).toEqual(b.page('ado', 'on_sale', 1));
    expect(a.page('ado', 'on_sale', 1)).not.toEqual(a.page('miku', 'on_sale', 1));
    expect(new FixtureCatalog({ itemsPerPage: 10, pages: 2, seed: 'other' }).page('ado', 'on_sale', 1)).not.toEqual(a.page('ado', 'on_sale', 1));
    const ids = [...a.items('ado', 'on_sale'), ...a.items('ado', 'sold')].map((i) => i.sourceId);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
  });

  it('pages slice the list and are empty past the last page', () => {
    const c = new FixtureCatalog({ itemsPerPage: 10, pages: 2 });
    expect(c.page('x', 'sold', 1)).toHaveLength(10);
    expect(c.page('x', 'sold', 2)).toHaveLength(10);
    expect(c.page('x', 'sold', 3)).toEqual([]);
    expect(c.page('x', 'sold', 1).every((i) => i.status === 'sold')).toBe(true);
  });

  it('sells, reprices and lists items', () => {
    const c = new FixtureCatalog({ itemsPerPage: 10, pages: 2 });
    const [first, second] = c.page('x', 'on_sale', 1);
    expect(c.sell('x', [first!.sourceId, 'nope'])).toBe(1);
    expect(c.page('x', 'sold', 1)[0]).toMatchObject({ sourceId: first!.sourceId, status: 'sold' });
    expect(c.page('x', 'on_sale', 1)[0]!.sourceId).toBe(second!.sourceId);
    expect(c.setPrice('x', second!.sourceId, 999)).toBe(true);
    expect(c.page('x', 'on_sale', 1)[0]!.price).toBe(999);
    const [fresh] = c.list('x', 1);
    expect(c.page('x', 'on_sale', 1)[0]).toEqual(fresh);
    c.reset();
    expect(c.page('x', 'on_sale', 1)[0]!.sourceId).toBe(first!.sourceId);
  });

  it('trades by the clock when market activity is on, the same way for the same seed', () => {
    const make = () => new FixtureCatalog({ itemsPerPage: 10, pages: 2, activity: { everyMs: 1000, sold: 2, listed: 3 } });
    const a = make();
    const b = make();
    a.trade('x', 0);
    a.trade('x', 999);
    expect(a.items('x', 'sold')).toHaveLength(20);
    a.trade('x', 2500); // two rounds
    expect(a.items('x', 'sold')).toHaveLength(24);
    expect(a.items('x', 'on_sale')).toHaveLength(20 - 4 + 6);
    b.trade('x', 0);
    b.trade('x', 2500);
    expect(b.items('x', 'sold')).toEqual(a.items('x', 'sold'));
    expect(new FixtureCatalog({ itemsPerPage: 10, pages: 2 }).items('x', 'sold')).toHaveLength(20);
  });

  it('keeps at most maxKeywords keywords, forgetting the least recently searched (which start over from their seed)', () => {
    const c = new FixtureCatalog({ itemsPerPage: 10, pages: 2, maxKeywords: 3 });
    const firstOfA = c.page('a', 'on_sale', 1)[0]!;
    c.sell('a', [firstOfA.sourceId]);
    c.page('b', 'on_sale', 1);
    c.page('c', 'on_sale', 1);
    c.page('a', 'on_sale', 1); // a is the most recent now: b goes first
    c.page('d', 'on_sale', 1);
    expect(c.keywordCount).toBe(3);
    expect(c.items('a', 'sold')[0]!.sourceId).toBe(firstOfA.sourceId); // a kept its trade
    for (let i = 0; i < 20_000; i++) c.page(`k${i}`, 'sold', 1);
    expect(c.keywordCount).toBe(3);
    expect(c.page('a', 'on_sale', 1)[0]).toEqual(firstOfA); // forgotten: back to its seed
  });
});
