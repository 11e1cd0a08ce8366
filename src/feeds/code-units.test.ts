import { describe, expect, it } from 'vitest';
import { codeUnitsReader } from './code-units.js';

const charCodes = (s: string) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));

describe('codeUnitsReader', () => {
  it('gives the code units charCodeAt gives, lone surrogates and NUL too, then a 0', () => {
    const read = codeUnitsReader();
    for (const s of ['', 'a', '<p class="x">é</p>', 'emoji 😀 and a lone \ud800 and \udc00 surrogate', 'nul\u0000 and \uffff', '\ufeffbom']) {
      const units = read(s);
      expect(Array.from(units.subarray(0, s.length)), s).toEqual(charCodes(s));
      expect(units[s.length], s).toBe(0);
    }
  });

  it('reuses its array for strings of up to 64 Ki units, and gives a longer one an array of its own', () => {
    const read = codeUnitsReader();
    const first = read('a'.repeat(100));
    expect(read('short')).toBe(first);
    expect(first[5]).toBe(0); // the end of the second string, whatever the first left after it
    const long = 'é'.repeat(70_000);
    const units = read(long);
    expect(units).not.toBe(first);
    expect(units.length).toBe(long.length + 1);
    expect(units[69_999]).toBe(0xe9);
    expect(units[70_000]).toBe(0);
    // and the next short string is back in the reused array, not holding the long one's memory
    expect(read('x')).toBe(first);
  });

  it('gives each reader its own array', () => {
    const one = codeUnitsReader();
    const other = codeUnitsReader();
    const a = one('abc');
    const b = other('xyz');
    expect(a).not.toBe(b);
    expect(Array.from(a.subarray(0, 3))).toEqual(charCodes('abc'));
  });
});
