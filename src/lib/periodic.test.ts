import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../test/support/wait.js';
import { startPeriodic } from './periodic.js';

describe('startPeriodic', () => {
  it('runs now and again each period, one run at a time, however long a run lasts', async () => {
    let active = 0;
    let most = 0;
    let done = 0;
    const stop = startPeriodic(async () => {
      most = Math.max(most, ++active);
      await new Promise((r) => setTimeout(r, 15)); // three periods long
      active--;
      done++;
    }, 5);
    expect(active).toBe(1); // now, before the first tick
    await waitFor(() => done >= 5, { message: 'runs did not go on' });
    await stop();
    expect(most).toBe(1);
  });

  it('waits at stop for the run in progress, then runs no more; a second stop is the first', async () => {
    let started = 0;
    let end!: () => void;
    const stop = startPeriodic(
      () => {
        started++;
        return new Promise<void>((resolve) => (end = resolve));
      },
      5,
      { runNow: false },
    );
    await waitFor(() => started === 1, { message: 'no first tick' });
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    expect(stop()).toBe(stop());
    for (let i = 0; i < 5; i++) await turn();
    expect(stopped).toBe(false);
    end();
    await stopping;
    expect(started).toBe(1);
  });

  it('hands a failed run to onError and goes on', async () => {
    const errors: unknown[] = [];
    let n = 0;
    const stop = startPeriodic(
      async () => {
        if (++n === 1) throw new Error('first run fails');
      },
      5,
      { onError: (err) => errors.push(err) },
    );
    await waitFor(() => n >= 3, { message: 'did not go on after a failure' });
    await stop();
    expect(errors).toEqual([new Error('first run fails')]);
  });
});
