import { describe, expect, it } from 'vitest';
import { formatApiKey, hashApiKeySecret, looksLikeApiKey, newApiKeySecret, parseApiKey, secretMatches } from './api-key-format.js';

describe('API key format', () => {
  it('round-trips a new key and matches its secret against the stored hash only', () => {
    const secret = newApiKeySecret();
    const text = formatApiKey(42, secret);
    expect(looksLikeApiKey(text)).toBe(true);
    expect(parseApiKey(text)).toEqual({ id: 42, secret });
    const stored = hashApiKeySecret(secret);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(newApiKeySecret(), stored)).toBe(false);
  });

  it('refuses malformed keys and ids out of range', () => {
    const secret = newApiKeySecret();
    for (const bad of [
      `wpk_0_${secret}`,
      `wpk_01_${secret}`,
      `wpk_3000000000_${secret}`,
      `wpk_1_${secret.slice(1)}`,
      `wpk_1_${secret}x`,
      `wpk_1e3_${secret}`,
      'eyJhbGciOi.x.y',
    ]) {
      expect(parseApiKey(bad), bad).toBeUndefined();
    }
    expect(secretMatches(secret, 'not-hex')).toBe(false);
  });
});
