import { describe, expect, it } from 'vitest';
import { findTextProblem, repeatedQueryField, textProblem } from './input-checks.js';

describe('textProblem', () => {
  it('refuses lone surrogates and NUL, and accepts every well-formed text', () => {
    expect(textProblem('\ud800')).toBe('lone_surrogate');
    expect(textProblem('a\udc00b')).toBe('lone_surrogate');
    expect(textProblem('\ude00\ud83d')).toBe('lone_surrogate');
    expect(textProblem('a\u0000')).toBe('nul');
    for (const ok of ['', 'plain', 'émoji 😀', '\ud83d\ude00', '\uffff', '\u0001']) expect(textProblem(ok), ok).toBeUndefined();
  });
});

describe('findTextProblem', () => {
  it('names the path of the first bad string, in keys too', () => {
    expect(findTextProblem({ items: [{ text: 'ok' }, { text: 'x\ud800' }] })).toEqual({ path: 'items.1.text', problem: 'lone_surrogate' });
    expect(findTextProblem({ a: 'ok', b: ['\u0000'] })).toEqual({ path: 'b.0', problem: 'nul' });
    expect(findTextProblem({ ['\ud800']: 1 })).toEqual({ path: '(key)', problem: 'lone_surrogate' });
    expect(findTextProblem('\u0000')).toEqual({ path: '', problem: 'nul' });
    expect(findTextProblem({ a: 1, b: null, c: [true, { d: 'fine' }] })).toBeUndefined();
  });

  it('walks a deeply nested value without overflowing the stack', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findTextProblem(deep)?.problem).toBe('nul');
  });
});

describe('repeatedQueryField', () => {
  it('names a field given twice', () => {
    expect(repeatedQueryField({ limit: ['1', '2'] })).toBe('limit');
    expect(repeatedQueryField({ limit: '1', state: 'failed' })).toBeUndefined();
  });
});
