import { describe, expect, it } from 'vitest';
import { settlesWithin, withTimeout } from './timeout.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));

describe('withTimeout', () => {
  it('settles like the work when it comes in time, and does not call onExpire', async () => {
    let expired = 0;
    await expect(withTimeout(later(5, 'v'), 200, { error: () => new Error('late'), onExpire: () => expired++ })).resolves.toBe('v');
    await expect(withTimeout(Promise.reject(new Error('boom')), 200, { error: () => new Error('late') })).rejects.toThrow('boom');
    expect(expired).toBe(0);
  });

  it('rejects with its error at the limit and calls onExpire once; a late rejection of the work is not left unhandled', async () => {
    let expired = 0;
    const work = new Promise<never>((_, reject) => setTimeout(reject, 40, new Error('dropped')));
    await expect(withTimeout(work, 10, { error: () => new Error('took too long'), onExpire: () => expired++ })).rejects.toThrow('took too long');
    expect(expired).toBe(1);
    await later(50, undefined);
  });

  it('gives up when the signal aborts, with the abort error', async () => {
    const controller = new AbortController();
    const pending = withTimeout(later(1000, 'v'), 1000, { error: () => new Error('limit'), signal: controller.signal, abortError: () => new Error('aborted') });
    controller.abort();
    await expect(pending).rejects.toThrow('aborted');
  });

  it('gives up at once on a signal aborted before, and starts a function only after that', async () => {
    const order: string[] = [];
    const controller = new AbortController();
    controller.abort();
    await expect(
      withTimeout(
        () => {
          order.push('started');
          return later(5, 'v');
        },
        100,
        { error: () => new Error('limit'), signal: controller.signal, onExpire: () => order.push('expired') },
      ),
    ).rejects.toThrow('limit');
    expect(order).toEqual(['expired', 'started']);
  });
});

describe('settlesWithin', () => {
  it('is true for work that resolves or rejects in time, false for work that does not', async () => {
    await expect(settlesWithin(later(5, 'v'), 200)).resolves.toBe(true);
    await expect(settlesWithin(Promise.reject(new Error('x')), 200)).resolves.toBe(true);
    await expect(settlesWithin(later(200, 'v'), 10)).resolves.toBe(false);
  });
});
