import { describe, expect, it } from 'vitest';
import { DeadlineError, settlesWithin, withTimeout } from './timeout.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));
/** Blocks the event loop, as a GC pause or a starved CPU does. */
const stall = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* busy */
  }
};

/** Work that settles only when the test says so (after the limit, however busy the machine). */
const held = <T>() => {
  let settle!: { resolve: (v: T) => void; reject: (e: Error) => void };
  const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  return { promise, ...settle };
};

describe('withTimeout', () => {
  it('settles like the work when it comes in time, and does not call onExpire', async () => {
    let expired = 0;
    await expect(withTimeout(later(5, 'v'), 200, { error: () => new Error('late'), onExpire: () => expired++ })).resolves.toBe('v');
    await expect(withTimeout(Promise.reject(new Error('boom')), 200, { error: () => new Error('late') })).rejects.toThrow('boom');
    expect(expired).toBe(0);
  });

  it('rejects with its error at the limit and calls onExpire once; a late rejection of the work is not left unhandled', async () => {
    let expired = 0;
    const work = held<never>();
    await expect(withTimeout(work.promise, 10, { error: () => new Error('took too long'), onExpire: () => expired++ })).rejects.toThrow('took too long');
    expect(expired).toBe(1);
    work.reject(new Error('dropped'));
    await later(10, undefined);
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

describe('withTimeout with a late outcome that must not be lost', () => {
  it('rejects with DeadlineError and hands the late result to onLate', async () => {
    const work = held<string>();
    const late: Promise<string>[] = [];
    await expect(withTimeout(work.promise, 20, { onLate: (p) => late.push(p) })).rejects.toBeInstanceOf(DeadlineError);
    expect(late).toHaveLength(1);
    work.resolve('late');
    await expect(late[0]).resolves.toBe('late');
  });

  it('a late rejection reaches onLate and is not left unhandled', async () => {
    let seen: unknown;
    const work = held<never>();
    await expect(withTimeout(work.promise, 10, { onLate: (p) => void p.catch((e: unknown) => (seen = e)) })).rejects.toBeInstanceOf(DeadlineError);
    work.reject(new Error('dropped connection'));
    await later(10, undefined);
    expect((seen as Error).message).toBe('dropped connection');
    // Without onLate it is dropped too (vitest fails the run on an unhandled rejection).
    const unwatched = held<never>();
    await expect(withTimeout(unwatched.promise, 5)).rejects.toBeInstanceOf(DeadlineError);
    unwatched.reject(new Error('x'));
    await later(10, undefined);
  });

  it('rejects with the error the caller makes, when it names what did not answer', async () => {
    class NamedDeadline extends DeadlineError {}
    const work = held<string>();
    await expect(withTimeout(work.promise, 5, { error: () => new NamedDeadline(5) })).rejects.toBeInstanceOf(NamedDeadline);
    work.resolve('late');
  });

  it('after a stalled event loop a reply that is already due wins over the due limit', async () => {
    let late = false;
    const limited = withTimeout(later(30, 'reply'), 20, { onLate: () => (late = true) });
    stall(100); // both timers are due when the loop wakes up; the limit's fires first
    await expect(limited).resolves.toBe('reply');
    expect(late).toBe(false);
  });
});

describe('settlesWithin', () => {
  it('is true for work that resolves or rejects in time, false for work that does not', async () => {
    await expect(settlesWithin(later(5, 'v'), 200)).resolves.toBe(true);
    await expect(settlesWithin(Promise.reject(new Error('x')), 200)).resolves.toBe(true);
    await expect(settlesWithin(later(200, 'v'), 10)).resolves.toBe(false);
  });
});
