import { describe, expect, it } from 'vitest';
import { OrderedList } from './ordered-list.js';

describe('OrderedList', () => {
  it('gives its values oldest first and takes any of them out', () => {
    const list = new OrderedList<string>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((v) => list.add(v));
    expect([...list.values()]).toEqual(['a', 'b', 'c', 'd']);
    list.remove(b!);
    expect([...list.values()]).toEqual(['a', 'c', 'd']);
    list.remove(a!);
    list.remove(d!);
    expect([...list.values()]).toEqual(['c']);
    expect(list.size).toBe(1);
    list.remove(c!);
    expect([...list.values()]).toEqual([]);
    expect(list.size).toBe(0);
    // Added after everything left: the list starts again from it.
    list.add('e');
    expect([...list.values()]).toEqual(['e']);
  });

  it('takes an entry out once, however often it is removed', () => {
    const list = new OrderedList<number>();
    const first = list.add(1);
    list.add(2);
    list.remove(first);
    list.remove(first);
    expect([...list.values()]).toEqual([2]);
    expect(list.size).toBe(1);
  });

  it('lets a sweep remove the value it is given', () => {
    const list = new OrderedList<number>();
    const entries = new Map([1, 2, 3, 4, 5].map((v) => [v, list.add(v)]));
    const seen: number[] = [];
    for (const v of list.values()) {
      seen.push(v);
      if (v % 2) list.remove(entries.get(v)!);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect([...list.values()]).toEqual([2, 4]);
  });

  it('leaves nothing held by an entry that left', () => {
    const list = new OrderedList<{ big: string }>();
    const older = list.add({ big: 'x' });
    const entry = list.add({ big: 'y' });
    list.add({ big: 'z' });
    list.remove(entry);
    expect(entry).toEqual({ value: undefined, older: undefined, newer: undefined });
    expect(older.newer?.value).toEqual({ big: 'z' });
  });
});
