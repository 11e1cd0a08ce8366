import { describe, expect, it } from 'vitest';
import { idFromHref, parsePrice, parseRow } from '../parse-row.js';
import { createSiteAdapter } from './create-site-adapter.js';

describe('site adapters', () => {
  it('fixture: search URLs by keyword, status and page', () => {
    const a = createSiteAdapter('fixture', 'http://127.0.0.1:3900/');
    expect(a.searchUrl('鬼滅 フィギュア', 'on_sale', 1)).toBe(
      'http://127.0.0.1:3900/search?keyword=%E9%AC%BC%E6%BB%85+%E3%83%95%E3%82%A3%E3%82%AE%E3%83%A5%E3%82%A2&status=on_sale&page=1',
    );
    expect(a.searchUrl('x', 'sold', 3)).toBe('http://127.0.0.1:3900/search?keyword=x&status=sold_out&page=3');
    expect(a.healthCheckUrl()).toBe('http://127.0.0.1:3900/');
  });

  it('mercari: page tokens after the first page, sold_out for sold; "embedded" means the real site', () => {
    const a = createSiteAdapter('mercari', 'embedded');
    expect(a.searchUrl('ado', 'on_sale', 1)).toBe('https://jp.mercari.com/search?keyword=ado&status=on_sale&sort=created_time&order=desc');
    expect(a.searchUrl('ado', 'sold', 2)).toBe('https://jp.mercari.com/search?keyword=ado&status=sold_out&sort=created_time&order=desc&page_token=v1%3A1');
  });

  it('mercari: an id from the item link, absolute URLs', () => {
    const a = createSiteAdapter('mercari', 'https://jp.mercari.com');
    expect(a.parseRow({ id: null, href: '/item/m12345678901', title: ' Ado  CD ', price: '¥1,280', image: 'https://static.mercdn.net/x.jpg' }, 'sold')).toEqual(
      {
        sourceId: 'm12345678901',
        title: 'Ado CD',
        price: 1280,
        imageUrl: 'https://static.mercdn.net/x.jpg',
        itemUrl: 'https://jp.mercari.com/item/m12345678901',
        status: 'sold',
      },
    );
  });

  it('skips rows that are not complete items', () => {
    expect(parseRow({ id: null, href: null, title: 't', price: '100', image: null }, 'on_sale', 'http://x')).toBeNull();
    expect(parseRow({ id: 'm1', href: null, title: 't', price: 'SOLD', image: null }, 'on_sale', 'http://x')).toBeNull();
  });

  it('parses prices and ids', () => {
    expect(parsePrice('¥12,345')).toBe(12345);
    expect(parsePrice('12 345 円')).toBe(12345);
    expect(parsePrice('')).toBeNull();
    expect(idFromHref('https://jp.mercari.com/shops/product/abcDEF?x=1')).toBe('abcDEF');
  });
});
