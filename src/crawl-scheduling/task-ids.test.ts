import { describe, expect, it } from 'vitest';
import { ipIdOfTask, newTaskId, nextTaskId, resultJobId, taskOfResultJob } from './task-ids.js';

describe('task ids', () => {
  it('carry the IP id and are valid BullMQ custom ids', () => {
    const id = newTaskId(42);
    expect(id).toMatch(/^ip42-[0-9a-f]{8}$/);
    expect(ipIdOfTask(id)).toBe(42);
    expect(id).not.toContain(':');
    expect(newTaskId(42)).not.toBe(id);
  });

  it('derive the next task id from the previous one, the same every time', () => {
    const first = newTaskId(7);
    const second = nextTaskId(7, first);
    expect(nextTaskId(7, first)).toBe(second);
    expect(second).not.toBe(first);
    expect(ipIdOfTask(second)).toBe(7);
    expect(nextTaskId(7, second)).not.toBe(second);
  });

  it('reject ids that are not ours', () => {
    for (const id of ['42', 'ip-1', 'ipx-01234567', 'ip1-012345678', 'ip1-0123456', 'repeat:1:2']) expect(ipIdOfTask(id)).toBeUndefined();
  });

  it('name result jobs after their task', () => {
    expect(resultJobId('ip1-01234567')).toBe('result-ip1-01234567');
    expect(taskOfResultJob('result-ip1-01234567')).toBe('ip1-01234567');
    expect(taskOfResultJob('ip1-01234567')).toBeUndefined();
  });
});
