import { describe, expect, it } from 'vitest';
import { DeadlineError, withDeadline } from './deadline.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));
/** Blocks the event loop, as a GC pause or a starved CPU does. */
const stall = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* busy */
  }
};

describe('withDeadline', () => {
  it('settles like the work when it comes in time', async () => {
    await expect(withDeadline(later(5, 'v'), 200)).resolves.toBe('v');
    await expect(withDeadline(Promise.reject(new Error('boom')), 200)).rejects.toThrow('boom');
  });

  it('rejects with DeadlineError and hands the late result to onLate', async () => {
    const late: Promise<string>[] = [];
    await expect(withDeadline(later(80, 'late'), 20, (p) => late.push(p))).rejects.toBeInstanceOf(DeadlineError);
    expect(late).toHaveLength(1);
    await expect(late[0]).resolves.toBe('late');
  });

  it('a late rejection reaches onLate and is not left unhandled', async () => {
    let seen: unknown;
    const work = new Promise<never>((_, reject) => setTimeout(reject, 40, new Error('dropped connection')));
    await expect(withDeadline(work, 10, (p) => void p.catch((e: unknown) => (seen = e)))).rejects.toBeInstanceOf(DeadlineError);
    await later(60, undefined);
    expect((seen as Error).message).toBe('dropped connection');
    // The default onLate swallows it too (vitest fails the run on an unhandled rejection).
    await expect(withDeadline(new Promise((_, reject) => setTimeout(reject, 30, new Error('x'))), 5)).rejects.toBeInstanceOf(DeadlineError);
    await later(50, undefined);
  });

  it('after a stalled event loop a reply that is already due wins over the due deadline', async () => {
    let late = false;
    const deadline = withDeadline(later(30, 'reply'), 20, () => (late = true));
    stall(100); // both timers are due when the loop wakes up; the deadline's fires first
    await expect(deadline).resolves.toBe('reply');
    expect(late).toBe(false);
  });

  it('rejects with the error the caller makes, when it names what did not answer', async () => {
    class NamedDeadline extends DeadlineError {}
    await expect(withDeadline(later(50, 'late'), 5, undefined, (ms) => new NamedDeadline(ms))).rejects.toBeInstanceOf(NamedDeadline);
    await later(60, undefined);
  });
});
