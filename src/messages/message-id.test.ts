import { describe, expect, it } from 'vitest';
import { newMessageId } from './message-id.js';

describe('newMessageId', () => {
  it('is a version 7 UUID carrying the milliseconds', () => {
    const id = newMessageId(0x0190_1234_5678, '3f2b8c1e-9d4a-4b6e-a1f0-123456789abc');
    expect(id).toBe('01901234-5678-7b6e-a1f0-123456789abc');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts by time, and differs within one millisecond', () => {
    const a = newMessageId(1_700_000_000_000);
    const b = newMessageId(1_700_000_000_001);
    expect(a < b).toBe(true);
    expect(newMessageId(5)).not.toBe(newMessageId(5));
  });
});
