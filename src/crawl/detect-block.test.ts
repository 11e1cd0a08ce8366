import { describe, expect, it } from 'vitest';
import { detectBlock, parseRetryAfter } from './detect-block.js';
import type { PageSnapshot } from './site-adapter.js';

const page = (over: Partial<PageSnapshot>): PageSnapshot => ({
  httpStatus: 200,
  title: 'figure の検索結果',
  text: '',
  rowCount: 20,
  noResults: false,
  challengeElement: false,
  ...over,
});

describe('detectBlock', () => {
  it.each([
    ['a normal results page', page({}), null],
    ['an empty results page', page({ rowCount: 0, noResults: true, text: 'No items found' }), null],
    ['HTTP 403', page({ httpStatus: 403, rowCount: 0 }), 'HTTP 403 Forbidden'],
    ['HTTP 429', page({ httpStatus: 429, rowCount: 0 }), 'HTTP 429 Too Many Requests'],
    ['a reCAPTCHA widget', page({ challengeElement: true, rowCount: 0 }), 'CAPTCHA / challenge on the page'],
    ['a CAPTCHA page by its wording', page({ rowCount: 0, title: 'Please verify you are human' }), 'block page (verify (that )?you are (a )?human)'],
    ['a Cloudflare interstitial', page({ rowCount: 0, title: 'Just a moment...' }), 'block page (just a moment)'],
  ])('%s', (_label, snapshot, expected) => {
    expect(detectBlock(snapshot)).toBe(expected);
  });

  it('ignores block wording inside real results (an item titled "captcha")', () => {
    expect(detectBlock(page({ text: 'captcha keychain ¥500' }))).toBeNull();
  });

  it('takes extra wording from the adapter', () => {
    expect(detectBlock(page({ rowCount: 0, text: 'アクセスが制限されています' }), [/アクセスが制限/])).toMatch(/block page/);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('30')).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
