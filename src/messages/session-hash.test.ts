import { describe, expect, it } from 'vitest';
import { sessionHash } from './session-hash.js';

describe('sessionHash', () => {
  it('is FNV-1a 32-bit', () => {
    expect(sessionHash('')).toBe(0x811c9dc5);
    expect(sessionHash('a')).toBe(0xe40c292c);
    expect(sessionHash('foobar')).toBe(0xbf9cf968);
  });

  it('spreads session ids over shards', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[sessionHash(`session-${i}`) % 4]!++;
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });
});
