import { describe, expect, it } from 'vitest';
import { isBlockedUrl } from './resource-blocking.js';

describe('isBlockedUrl', () => {
  it.each([
    ['https://jp.mercari.com/search?keyword=x', false],
    ['https://jp.mercari.com/_next/static/chunks/app.js', false],
    ['https://api.mercari.jp/v2/entities:search', false],
    ['https://jp.mercari.com/styles.css', false],
    ['https://static.mercdn.net/item/detail/orig/photos/m1_1.jpg?1700000000', true],
    ['http://127.0.0.1:3900/img/m1.jpg', true],
    ['https://fonts.gstatic.com/s/noto/v1/x.woff2', true],
    ['https://x/video.mp4', true],
    ['https://www.googletagmanager.com/gtm.js?id=GTM-1', true],
    ['http://127.0.0.1:3900/analytics.js', true],
    ['http://127.0.0.1:3900/analytics/collect', true],
    ['https://www.google-analytics.com/g/collect?v=2', true],
  ])('%s → %s', (url, blocked) => {
    expect(isBlockedUrl(url)).toBe(blocked);
  });
});
