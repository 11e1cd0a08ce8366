import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, nestedDeeperThan, parseJsonText } from './json-body.js';

const malformed = { status: 400, code: 'malformed_json', field: '(body)' };

describe('parseJsonText', () => {
  it('reads objects and arrays, an empty body as {}, and drops a byte order mark', () => {
    expect(parseJsonText('{"a":[1,{"b":"c"}]}')).toEqual({ a: [1, { b: 'c' }] });
    expect(parseJsonText(' \n[1,2]')).toEqual([1, 2]);
    expect(parseJsonText('')).toEqual({});
    expect(parseJsonText('  \n ')).toEqual({});
    expect(parseJsonText('\ufeff{"a":1}')).toEqual({ a: 1 });
  });

  it('refuses text that is not JSON, and JSON that is not an object or array at the top', () => {
    for (const text of ['{"a": ', 'nope', '"x"', '123', 'null', 'true', '{"a":1}x', "{'a':1}"]) {
      expect(() => parseJsonText(text), text).toThrow(expect.objectContaining(malformed));
    }
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} levels without recursing into it`, () => {
    const at = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(parseJsonText(at(MAX_DEPTH))).toBeInstanceOf(Array);
    expect(() => parseJsonText(at(MAX_DEPTH + 1))).toThrow(expect.objectContaining({ ...malformed, message: expect.stringContaining('deeper') }));
    // Deep enough to overflow a recursive parser or JSON.stringify.
    expect(() => parseJsonText(`{"data":${at(1_000_000)}}`)).toThrow(expect.objectContaining(malformed));
    expect(() => parseJsonText('{"a":'.repeat(200_000))).toThrow(expect.objectContaining(malformed));
  });
});

describe('nestedDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect(nestedDeeperThan('{"a":{"b":[1]}}', 2)).toBe(true);
    expect(nestedDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(nestedDeeperThan('{"a":"[[[[[[{{{{"}', 1)).toBe(false);
    expect(nestedDeeperThan('{"a":"\\"[[[[","b":1}', 1)).toBe(false);
    expect(nestedDeeperThan('[[],[],[[]]]', 2)).toBe(true);
    expect(nestedDeeperThan('[[],[],[]]', 2)).toBe(false);
  });
});
