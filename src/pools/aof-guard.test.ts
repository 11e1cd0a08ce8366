import { describe, expect, it } from 'vitest';
import { commandMayHaveRun } from './command-may-have-run.js';
import { AOF_BUSY, isAofBusyReply, untilAofWritable } from './aof-guard.js';

class ReplyError extends Error {
  override name = 'ReplyError';
}
const busy = () => new ReplyError(`${AOF_BUSY} Redis is still syncing its AOF; the pop would be answered before it is written`);

/** A pop that Redis refuses `refusals` times, then answers `value`. */
function popRefused(refusals: number, value = 'popped') {
  let calls = 0;
  const pop = async () => {
    calls++;
    if (calls <= refusals) throw busy();
    return value;
  };
  return { pop, calls: () => calls };
}

describe('the AOF guard of pool pops', () => {
  it('tells its refusal from other replies; a refused pop did not run', () => {
    expect(isAofBusyReply(busy())).toBe(true);
    expect(isAofBusyReply(new ReplyError('ERR unknown command'))).toBe(false);
    expect(isAofBusyReply(new Error(`${AOF_BUSY} not a reply`))).toBe(false);
    expect(commandMayHaveRun(busy())).toBe(false);
  });

  it('sends a refused pop again until Redis lets it run', async () => {
    const p = popRefused(4);
    await expect(untilAofWritable(p.pop, Date.now() + 5_000)).resolves.toBe('popped');
    expect(p.calls()).toBe(5);
  });

  it('gives up with the refusal rather than send it again at or past the deadline', async () => {
    const sentAt: number[] = [];
    const refused = async () => {
      sentAt.push(Date.now());
      throw busy();
    };
    const giveUpAt = Date.now() + 60;
    const err = await untilAofWritable(refused, giveUpAt).catch((e: unknown) => e);
    expect(isAofBusyReply(err)).toBe(true);
    expect(sentAt.length).toBeGreaterThan(1);
    expect(sentAt.filter((t) => t >= giveUpAt)).toEqual([]);
  });

  it('passes any other failure on at once', async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('Connection is closed.');
    };
    await expect(untilAofWritable(failing, Date.now() + 5_000)).rejects.toThrow('Connection is closed.');
    expect(calls).toBe(1);
  });
});
