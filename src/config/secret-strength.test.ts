import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { weakSecretReason } from './secret-strength.js';

describe('weakSecretReason', () => {
  it('accepts random secrets written as hex or base64', () => {
    for (let i = 0; i < 2000; i++) {
      expect(weakSecretReason(randomBytes(32).toString('hex'))).toBeUndefined();
      expect(weakSecretReason(randomBytes(32).toString('base64'))).toBeUndefined();
      expect(weakSecretReason(randomBytes(24).toString('base64url'))).toBeUndefined();
    }
  });

  it('refuses short, repetitive or low-alphabet secrets', () => {
    expect(weakSecretReason('short-but-random-Q8x')).toMatch(/at least 32 bytes/);
    expect(weakSecretReason('a'.repeat(64))).toMatch(/random/);
    expect(weakSecretReason('abcd'.repeat(16))).toMatch(/random/);
    expect(weakSecretReason('0101010101010101010101010101010101')).toMatch(/random/);
    expect(weakSecretReason('passwordpasswordpasswordpassword12')).toMatch(/random/);
    expect(weakSecretReason('Tr0ub4dor&3-Tr0ub4dor&3-Tr0ub4dor&3')).toMatch(/random/);
    expect(weakSecretReason('k9Xq2LmZ7vB4nR8wT1yU6pA3sD5fG0hJ-xyxyxyxyxyxy')).toMatch(/repeats/);
  });
});
