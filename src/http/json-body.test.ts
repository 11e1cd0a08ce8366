import { describe, expect, it } from 'vitest';
import { checkHeaderText, invalidUtf8At, jsonFieldAt, MAX_DEPTH, nestedDeeperThan, parseJsonText } from './json-body.js';

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

describe('invalidUtf8At', () => {
  const at = (...bytes: number[]) => invalidUtf8At(Uint8Array.from(bytes));
  it('finds the first byte that is not well-formed UTF-8', () => {
    expect(invalidUtf8At(Buffer.from('plain, é, 中, 😀'))).toBe(-1);
    expect(at(0x61, 0xff)).toBe(1);
    expect(at(0x61, 0xc3)).toBe(1); // cut
    expect(at(0xc0, 0xaf)).toBe(0); // overlong "/"
    expect(at(0xe0, 0x80, 0xaf)).toBe(0); // overlong
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // a surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
    expect(at(0x61, 0x62, 0x80)).toBe(2); // a lone continuation byte
  });
});

describe('jsonFieldAt', () => {
  it('names the field being read at the end of a prefix, as the 400s name fields', () => {
    expect(jsonFieldAt('{"name":"ab')).toBe('name');
    expect(jsonFieldAt('{"a":1,"name":"ab')).toBe('name');
    expect(jsonFieldAt('{"items":[{"text":"ok"},{"text":"x')).toBe('items.1.text');
    expect(jsonFieldAt('{"a":{"b":"c"},"d":["x","y')).toBe('d.1');
    expect(jsonFieldAt('{"a":{"ke')).toBe('a.(key)');
    expect(jsonFieldAt('{"a\\"b":"x')).toBe('a"b');
    expect(jsonFieldAt('{"a":"[{,","b":"')).toBe('b');
    expect(jsonFieldAt('')).toBe('');
  });
});

describe('checkHeaderText', () => {
  it('refuses a header value that is not UTF-8 (node hands the bytes over as latin1), naming the header', () => {
    const latin1 = (bytes: number[]) => Buffer.from(bytes).toString('latin1');
    expect(() => checkHeaderText({ 'x-a': 'plain', 'x-b': latin1([0x63, 0x61, 0x66, 0xc3, 0xa9]) })).not.toThrow();
    expect(() => checkHeaderText({ 'x-a': 'plain', 'user-agent': latin1([0x61, 0xff]) })).toThrow(
      expect.objectContaining({ status: 400, code: 'invalid_text', field: 'user-agent' }),
    );
    expect(() => checkHeaderText({ 'set-cookie': ['ok', latin1([0xc3])] })).toThrow(expect.objectContaining({ field: 'set-cookie' }));
  });
});
