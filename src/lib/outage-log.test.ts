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
