import { describe, expect, it } from 'vitest';
import { SESSION_START, answerFromCache, entryOf, idOfEntry, readAnswerJson, seqOfEntry, viewOf } from './message-entry.js';

const view = (n: number, content = `m${n}`) => ({
  id: `id-${n}`,
  seq: 1_700_000_000_000_000 + n,
  role: 'user' as const,
  content,
  createdAt: '2026-01-01T00:00:00.000Z',
});
const e = (n: number) => entryOf(view(n));

describe('message entries', () => {
  it('serialise with a fixed key order and give back their seq without parsing', () => {
    const accepted = {
      messageId: 'id-1',
      sessionId: 's',
      seq: 1_700_000_000_000_001,
      role: 'user' as const,
      content: 'hi',
      acceptedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(entryOf(viewOf(accepted))).toBe('{"id":"id-1","seq":1700000000000001,"role":"user","content":"hi","createdAt":"2026-01-01T00:00:00.000Z"}');
    expect(seqOfEntry(entryOf(view(7, '{"id":"x","seq":5,"a":"\\"seq\\":9"}')))).toBe(1_700_000_000_000_007);
    expect(seqOfEntry(SESSION_START)).toBeUndefined();
    expect(idOfEntry(e(3))).toBe('id-3');
    expect(idOfEntry(SESSION_START)).toBeUndefined();
  });

  it('build the read answer from entries', () => {
    const body = readAnswerJson([e(1), e(2)], 'cache');
    expect(JSON.parse(body)).toEqual({ messages: [view(1), view(2)], source: 'cache' });
    expect(JSON.parse(readAnswerJson([], 'db'))).toEqual({ messages: [], source: 'db' });
  });
});

describe('answerFromCache', () => {
  const cases: [string, string[], number, string[] | undefined][] = [
    ['empty list: miss', [], 50, undefined],
    ['suffix shorter than the limit: miss', [e(1), e(2)], 3, undefined],
    ['suffix as long as the limit: hit', [e(1), e(2), e(3)], 3, [e(1), e(2), e(3)]],
    ['whole session shorter than the limit: hit', [SESSION_START, e(1), e(2)], 50, [e(1), e(2)]],
    ['whole session, slice cut at the limit (marker off the slice): hit', [e(2), e(3)], 2, [e(2), e(3)]],
    ['whole session of limit - 1 messages: hit', [SESSION_START, e(1)], 2, [e(1)]],
    ['whole empty session: hit with nothing', [SESSION_START], 5, []],
  ];
  for (const [name, slice, limit, expected] of cases) {
    it(name, () => expect(answerFromCache(slice, limit)).toEqual(expected));
  }
});
