import { describe, expect, it } from 'vitest';
import { classifyError, countsTowardsProxyBreaker } from './classify-error.js';
import { PageBlockedError, PageHttpError, PageTimeoutError } from './crawl-errors.js';

function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

describe('classifyError', () => {
  const cases: [string, unknown, string][] = [
    ['a detected block', new PageBlockedError('HTTP 403'), 'blocked'],
    ['the page deadline', new PageTimeoutError('page took longer than 30000 ms'), 'timeout'],
    ["puppeteer's TimeoutError", named('TimeoutError', 'Navigation timeout of 30000 ms exceeded'), 'timeout'],
    ['a Chromium timeout code', new Error('net::ERR_TIMED_OUT at http://x/'), 'timeout'],
    ['a refused connection', new Error('net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/search'), 'network'],
    ['an empty response', new Error('net::ERR_EMPTY_RESPONSE at http://x/'), 'network'],
    ['a dead proxy', new Error('net::ERR_PROXY_CONNECTION_FAILED at http://x/'), 'network'],
    ['a failed tunnel', new Error('net::ERR_TUNNEL_CONNECTION_FAILED at https://x/'), 'network'],
    ['a server error', new PageHttpError(502), 'network'],
    ['a missing page', new PageHttpError(404), 'unknown'],
    ['a Node socket error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'network'],
    ['a script error', new TypeError("Cannot read properties of null (reading 'href')"), 'unknown'],
    ['a thrown string', 'boom', 'unknown'],
  ];
  it.each(cases)('%s', (_label, err, expected) => {
    expect(classifyError(err)).toBe(expected);
  });

  it('counts blocked, timeout and network failures towards the proxy breaker, not unknown ones', () => {
    expect(['timeout', 'blocked', 'network', 'unknown'].map((c) => countsTowardsProxyBreaker(c as never))).toEqual([true, true, true, false]);
  });
});
