import { describe, expect, it } from 'vitest';
import { shouldBlockRequest } from './resource-blocking.js';

describe('shouldBlockRequest', () => {
  it.each([
    ['document', 'https://jp.mercari.com/search?keyword=x', false],
    ['script', 'https://jp.mercari.com/_next/static/chunks/app.js', false],
    ['xhr', 'https://api.mercari.jp/v2/entities:search', false],
    ['stylesheet', 'https://jp.mercari.com/styles.css', false],
    ['image', 'https://static.mercdn.net/item/m1.jpg', true],
    ['font', 'https://fonts.gstatic.com/noto.woff2', true],
    ['media', 'https://x/video.mp4', true],
    ['script', 'https://www.googletagmanager.com/gtm.js?id=GTM-1', true],
    ['script', 'http://127.0.0.1:3900/analytics.js', true],
    ['ping', 'http://127.0.0.1:3900/analytics/collect', true],
    ['fetch', 'https://www.google-analytics.com/g/collect?v=2', true],
  ])('%s %s → %s', (type, url, blocked) => {
    expect(shouldBlockRequest(type, url)).toBe(blocked);
  });
});
