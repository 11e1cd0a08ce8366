import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A group commit whose flushes wait until the test releases them. */
function harness(options: { maxItems?: number; maxBytes?: number; parallel?: number } = {}) {
  const flushes: { items: string[]; done: ReturnType<typeof deferred> }[] = [];
  const gc = new GroupCommit<string>({
    maxItems: options.maxItems ?? 100,
    ...(options.maxBytes ? { maxBytes: options.maxBytes, sizeOf: (s: string) => s.length } : {}),
    parallel: options.parallel ?? 1,
    flush: (items) => {
      const done = deferred();
      flushes.push({ items, done });
      return done.promise;
    },
  });
  return { gc, flushes };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupCommit', () => {
  it('flushes a lone submission at once', async () => {
    const { gc, flushes } = harness();
    const p = gc.submit(['a']);
    expect(flushes.map((f) => f.items)).toEqual([['a']]);
    flushes[0]!.done.resolve();
    await expect(p).resolves.toBeUndefined();
  });

  it('gathers what arrives during a flush into the next one, in arrival order', async () => {
    const { gc, flushes } = harness();
    const first = gc.submit(['a']);
    const rest = [gc.submit(['b']), gc.submit(['c', 'd']), gc.submit(['e'])];
    expect(flushes).toHaveLength(1);
    expect(gc.waiting).toBe(4);
    flushes[0]!.done.resolve();
    await first;
    await tick();
    expect(flushes.map((f) => f.items)).toEqual([['a'], ['b', 'c', 'd', 'e']]);
    flushes[1]!.done.resolve();
    await Promise.all(rest);
  });

  it('caps a flush by items and by bytes, and a submission waits for all its items', async () => {
    const { gc, flushes } = harness({ maxItems: 2, maxBytes: 5 });
    void gc.submit(['x']);
    const big = gc.submit(['aaa', 'bbb', 'c', 'd', 'e']);
    flushes[0]!.done.resolve();
    for (let i = 1; i < 4; i++) {
      await tick();
      flushes[i]!.done.resolve();
    }
    await big;
    expect(flushes.map((f) => f.items)).toEqual([['x'], ['aaa'], ['bbb', 'c'], ['d', 'e']]);
  });

  it('runs up to `parallel` flushes at once', () => {
    const { gc, flushes } = harness({ parallel: 2 });
    void gc.submit(['a']);
    void gc.submit(['b']);
    void gc.submit(['c']);
    expect(flushes.map((f) => f.items)).toEqual([['a'], ['b']]);
  });

  it('fails every submission with an item in a failed flush, and goes on with the next', async () => {
    const { gc, flushes } = harness({ maxItems: 2 });
    const first = gc.submit(['a']);
    const split = gc.submit(['b', 'c', 'd']);
    const later = gc.submit(['e']);
    flushes[0]!.done.reject(new Error('db down'));
    await expect(first).rejects.toThrow('db down');
    await tick();
    flushes[1]!.done.resolve(); // b, c
    await tick();
    flushes[2]!.done.reject(new Error('again')); // d, e
    await expect(split).rejects.toThrow('again');
    await expect(later).rejects.toThrow('again');
    expect(gc.waiting).toBe(0);
  });
});
