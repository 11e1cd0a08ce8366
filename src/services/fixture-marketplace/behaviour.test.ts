import { describe, expect, it } from 'vitest';
import { BehaviourRules } from './behaviour.js';

const req = { keyword: 'x', status: 'on_sale' as const, page: 1, clientIp: '127.0.0.1' };

describe('BehaviourRules', () => {
  it('serves normally without a matching rule; the first matching rule decides', () => {
    const rules = new BehaviourRules();
    expect(rules.pick(req)).toBeNull();
    rules.set([
      { mode: 'captcha', match: { page: 2 } },
      { mode: 'forbidden', match: { clientIp: '10.0.0.1' } },
      { mode: 'slow', delayMs: 100 },
    ]);
    expect(rules.pick({ ...req, page: 2 })?.mode).toBe('captcha');
    expect(rules.pick({ ...req, clientIp: '10.0.0.1' })?.mode).toBe('forbidden');
    expect(rules.pick(req)?.mode).toBe('slow');
  });

  it('lapses a rule after `times` matching requests', () => {
    const rules = new BehaviourRules();
    rules.set([{ mode: 'rate-limited', times: 2, match: { status: 'sold' } }]);
    expect(rules.pick(req)).toBeNull(); // not matching: not counted
    expect(rules.pick({ ...req, status: 'sold' })?.mode).toBe('rate-limited');
    expect(rules.pick({ ...req, status: 'sold' })?.mode).toBe('rate-limited');
    expect(rules.pick({ ...req, status: 'sold' })).toBeNull();
    expect(rules.list()).toEqual([]);
  });
});
