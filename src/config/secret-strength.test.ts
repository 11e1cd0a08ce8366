import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_SEQUENCE_SHARE, sequenceShare, weakSecretReason } from './secret-strength.js';
import { EXAMPLE_JWT_SECRET } from './auth.js';

describe('weakSecretReason', () => {
  it('accepts random secrets written as hex or base64', () => {
    let highestShare = 0;
    for (let i = 0; i < 2000; i++) {
      for (const secret of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64'), randomBytes(24).toString('base64url')]) {
        expect(weakSecretReason(secret), secret).toBeUndefined();
        highestShare = Math.max(highestShare, sequenceShare(secret));
      }
    }
    // Far from the limit: 100,000 draws each of 16 to 48 random bytes, as hex and base64, stayed under 0.3.
    expect(highestShare).toBeLessThan(MAX_SEQUENCE_SHARE);
  });

  it('refuses the published example, placeholders and variants of them', () => {
    expect(weakSecretReason(EXAMPLE_JWT_SECRET)).toMatch(/published example/);
    expect(weakSecretReason('dev-only-secret-change-me-0123456789abcdeg')).toMatch(/placeholder: it contains "changeme"/);
    expect(weakSecretReason('DEV_ONLY_Change_Me_9f8e7d6c5b4a3f2e1d0c9b8a')).toMatch(/placeholder: it contains "changeme"/);
    expect(weakSecretReason('a-string-secret-at-least-256-bits-long')).toMatch(/placeholder/);
    expect(weakSecretReason('my-JWT-Default-Key-Kq82nXz01LmPw7Rt5v')).toMatch(/placeholder: it contains "default"/);
  });

  it('refuses secrets that run through the alphabet, the digits or a keyboard row', () => {
    expect(weakSecretReason('abcdefghijklmnopqrstuvwxyz0123456789')).toMatch(/sequence/);
    expect(weakSecretReason('zyxwvutsrqponmlkjihgfedcba9876543210')).toMatch(/sequence/);
    expect(weakSecretReason('abcd1234efgh5678ijkl9012mnop3456qrst')).toMatch(/sequence/);
    expect(weakSecretReason('Abcdefgh12345678!@#$%^&*IJKLMNOP')).toMatch(/sequence/);
    expect(weakSecretReason('asdfghjkl;zxcvbnm,./1qaz2wsx3edcKq8')).toMatch(/sequence/);
    expect(sequenceShare('abcdefghijklmnopqrstuvwxyz0123456789')).toBe(1);
    expect(sequenceShare('k9Xq2LmZ7vB4nR8wT1yU6pA3sD5fG0hJ')).toBe(0);
  });

  it('refuses short, repetitive or low-alphabet secrets', () => {
    expect(weakSecretReason('short-but-random-Q8x')).toMatch(/at least 32 bytes/);
    expect(weakSecretReason('a'.repeat(64))).toMatch(/random/);
    expect(weakSecretReason('abcd'.repeat(16))).toMatch(/random/);
    expect(weakSecretReason('0101010101010101010101010101010101')).toMatch(/random/);
    expect(weakSecretReason('passwordpasswordpasswordpassword12')).toMatch(/placeholder/);
    expect(weakSecretReason('Tr0ub4dor&3-Tr0ub4dor&3-Tr0ub4dor&3')).toMatch(/random/);
    expect(weakSecretReason('k9Xq2LmZ7vB4nR8wT1yU6pA3sD5fG0hJ-xyxyxyxyxyxy')).toMatch(/repeats/);
  });
});
