import { describe, expect, it } from 'vitest';
import { dedupeItems, parseStoredState, summarize, transition, type StoredItemState } from './state-machine.js';

const T0 = 1_700_000_000_000;
const T1 = T0 + 3_600_000;
const state = (status: 'on_sale' | 'sold', price: number): StoredItemState => ({ status, price, firstSeen: T0, lastSeen: T0 });
const item = (sourceId: string, status: 'on_sale' | 'sold', price = 1000) => ({ sourceId, title: sourceId, price, imageUrl: null, itemUrl: null, status });

describe('item state machine', () => {
  it.each([
    // stored state,            seen status, seen price, kind,          inflow, outflow, firstSeen
    [null, 'on_sale', 1000, 'new_listing', 1, 0, T1],
    [null, 'sold', 1000, 'new_sold', 0, 1, T1],
    [state('on_sale', 1000), 'sold', 1000, 'sold', 0, 1, T0],
    [state('on_sale', 1000), 'sold', 900, 'sold', 0, 1, T0],
    [state('sold', 1000), 'on_sale', 1000, 'relisted', 0, 0, T0],
    [state('on_sale', 1000), 'on_sale', 1200, 'price_change', 0, 0, T0],
    [state('on_sale', 1000), 'on_sale', 1000, 'unchanged', 0, 0, T0],
    [state('sold', 1000), 'sold', 1000, 'unchanged', 0, 0, T0],
    [state('sold', 1000), 'sold', 800, 'unchanged', 0, 0, T0],
  ] as const)('%o seen %s at %d → %s', (stored, status, price, kind, inflow, outflow, firstSeen) => {
    expect(transition(stored, { status, price }, T1)).toEqual({ kind, inflow, outflow, firstSeen });
  });

  it('parses stored hashes; empty or malformed ones are unknown', () => {
    expect(parseStoredState({ status: 'sold', price: '500', first_seen: String(T0), last_seen: String(T1) })).toEqual({
      status: 'sold',
      price: 500,
      firstSeen: T0,
      lastSeen: T1,
    });
    expect(parseStoredState({})).toBeNull();
    expect(parseStoredState(null)).toBeNull();
    expect(parseStoredState({ status: 'available', price: '1', first_seen: '1' })).toBeNull();
    expect(parseStoredState({ status: 'on_sale', price: 'x', first_seen: '1' })).toBeNull();
  });

  it('keeps one entry per source id, the sold sighting winning', () => {
    const out = dedupeItems([item('a', 'on_sale', 1), item('b', 'on_sale', 1), item('a', 'sold', 2), item('b', 'on_sale', 3), item('a', 'on_sale', 4)]);
    expect(out.map((i) => [i.sourceId, i.status, i.price])).toEqual([
      ['a', 'sold', 2],
      ['b', 'on_sale', 3],
    ]);
  });

  it('summarizes inflow, outflow, sold price samples and counts per kind', () => {
    const entries = [
      { item: { price: 100 }, transition: transition(null, { status: 'on_sale', price: 100 }, T1) },
      { item: { price: 200 }, transition: transition(null, { status: 'sold', price: 200 }, T1) },
      { item: { price: 300 }, transition: transition(state('on_sale', 300), { status: 'sold', price: 300 }, T1) },
      { item: { price: 400 }, transition: transition(state('on_sale', 1), { status: 'on_sale', price: 400 }, T1) },
      { item: { price: 500 }, transition: transition(state('sold', 1), { status: 'on_sale', price: 500 }, T1) },
    ];
    expect(summarize(entries)).toEqual({
      inflow: 1,
      outflow: 2,
      soldPrices: [200, 300],
      counts: { new_listing: 1, new_sold: 1, sold: 1, relisted: 1, price_change: 1, unchanged: 0 },
    });
  });
});
