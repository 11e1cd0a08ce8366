import { describe, expect, it } from 'vitest';
import { OutageLog } from './outage-log.js';

describe('OutageLog', () => {
  it('reports the first failure of an outage and the first success after it, nothing in between', () => {
    const lines: string[] = [];
    const outage = new OutageLog<string>({ began: (cause) => lines.push(`down: ${cause}`), ended: () => lines.push('up') });
    outage.success();
    expect(outage.isDown).toBe(false);
    outage.failure('refused');
    outage.failure('refused again');
    expect(outage.isDown).toBe(true);
    outage.success();
    outage.success();
    outage.failure('reset');
    expect(lines).toEqual(['down: refused', 'up', 'down: reset']);
  });
});

describe('OutageLog failure count', () => {
  it('tells the end of an outage how many failures it had, and starts again from 0', () => {
    const ends: number[] = [];
    const outage = new OutageLog<string>({ began: () => undefined, ended: (failures) => ends.push(failures) });
    outage.failure('a');
    outage.failure('b');
    outage.failure('c');
    expect(outage.failures).toBe(3);
    outage.success();
    expect(outage.failures).toBe(0);
    outage.failure('d');
    outage.success();
    expect(ends).toEqual([3, 1]);
  });
});
