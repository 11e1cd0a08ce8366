import { describe, expect, it } from 'vitest';
import { compareServingOrder, decodeItem, encodeItem, idOfEncoded, itemOf } from './pool-item.js';

describe('pool item encoding', () => {
  const cases: { item: { id: number; text: string }; encoded: string }[] = [
    { item: { id: 1, text: 'hello' }, encoded: '{"id":1,"text":"hello"}' },
    { item: { id: 0, text: '' }, encoded: '{"id":0,"text":""}' },
    { item: { id: 9007199254740991, text: 'big id' }, encoded: '{"id":9007199254740991,"text":"big id"}' },
    { item: { id: 42, text: 'quote " backslash \\ newline \n ,"id":7' }, encoded: '{"id":42,"text":"quote \\" backslash \\\\ newline \\n ,\\"id\\":7"}' },
    { item: { id: 5, text: '标题和正文 🚀' }, encoded: '{"id":5,"text":"标题和正文 🚀"}' },
  ];

  it.each(cases)('encodes $item.id with the id first and decodes it back', ({ item, encoded }) => {
    expect(encodeItem(item)).toBe(encoded);
    expect(decodeItem(encoded)).toEqual(item);
    expect(idOfEncoded(encoded)).toBe(item.id);
  });

  it('refuses ids the scripts could not read', () => {
    expect(() => encodeItem({ id: -1, text: 'x' })).toThrow(RangeError);
    expect(() => encodeItem({ id: 1.5, text: 'x' })).toThrow(RangeError);
    expect(idOfEncoded('{"text":"x","id":1}')).toBeUndefined();
    expect(() => decodeItem('{"id":"1","text":"x"}')).toThrow(TypeError);
  });

  it('reads an item a pop script reply holds (already parsed) and refuses anything else', () => {
    const [item, length] = JSON.parse(`[${encodeItem({ id: 7, text: 'seven' })},3]`) as unknown[];
    expect(itemOf(item)).toEqual({ id: 7, text: 'seven' });
    expect(length).toBe(3);
    for (const other of [null, 3, 'x', [], { id: 1 }, { text: 'x' }, { id: '1', text: 'x' }]) expect(() => itemOf(other)).toThrow(TypeError);
  });
});

describe('serving order', () => {
  it('is batch_id DESC, id ASC', () => {
    const rows = [
      { id: 5, batchId: 1 },
      { id: 2, batchId: 3 },
      { id: 9, batchId: 3 },
      { id: 1, batchId: 1 },
      { id: 7, batchId: 2 },
    ];
    expect([...rows].sort(compareServingOrder).map((r) => r.id)).toEqual([2, 9, 7, 1, 5]);
  });
});
