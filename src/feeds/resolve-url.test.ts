import { describe, expect, it } from 'vitest';
import { applyXmlBase, documentBase, isAbsoluteHttpUrl, MAX_URL_LENGTH, quickResolve, resolveHttpUrl } from './resolve-url.js';
import { seededRandom } from '../lib/seeded-random.js';

describe('resolve-url', () => {
  it('takes Content-Location as the document base when it is an http(s) URL, relative to the URL', () => {
    expect(documentBase('http://a.test/x/feed', '/y/')).toBe('http://a.test/y/');
    expect(documentBase('http://a.test/x/feed', 'https://b.test/z')).toBe('https://b.test/z');
    expect(documentBase('http://a.test/x/feed', 'javascript:alert(1)')).toBe('http://a.test/x/feed');
    expect(documentBase('http://a.test/x/feed', null)).toBe('http://a.test/x/feed');
  });

  it('chains xml:base values and ignores those that are not http(s)', () => {
    const feed = applyXmlBase('http://a.test/feed.xml', 'http://b.test/root/');
    const entry = applyXmlBase(feed, 'entries/');
    expect(entry).toBe('http://b.test/root/entries/');
    expect(applyXmlBase(entry, '/abs/')).toBe('http://b.test/abs/');
    expect(applyXmlBase(entry, 'urn:x')).toBe(entry);
    expect(applyXmlBase(entry, 'data:text/html,x')).toBe(entry);
    expect(applyXmlBase(entry, undefined)).toBe(entry);
  });

  it('keeps only http(s) links of a sane length', () => {
    expect(resolveHttpUrl(' ../p?q=1 ', 'http://a.test/x/y/')).toBe('http://a.test/x/p?q=1');
    expect(resolveHttpUrl('//c.test/p', 'https://a.test/')).toBe('https://c.test/p');
    for (const bad of [
      'javascript:alert(1)',
      'java\tscript:alert(1)',
      ' JAVASCRIPT:x',
      'vbscript:x',
      'data:text/html,x',
      'file:///etc/passwd',
      'mailto:a@b.test',
      'http://[::1',
      '',
    ]) {
      expect(resolveHttpUrl(bad, 'http://a.test/')).toBeNull();
    }
    expect(resolveHttpUrl(`http://a.test/${'x'.repeat(MAX_URL_LENGTH)}`, 'http://a.test/')).toBeNull();
  });

  it('resolves the plain URLs it joins as strings exactly as the URL parser does', () => {
    // The URL parser alone, as resolveHttpUrl was before its quick path.
    const parser = (value: string, base: string): string | null => {
      if (!value) return null;
      const trimmed = value.trim();
      let href: string;
      try {
        href = (isAbsoluteHttpUrl(trimmed) ? new URL(trimmed) : new URL(trimmed, base)).href;
      } catch {
        return null;
      }
      return /^https?:/.test(href) && href.length <= MAX_URL_LENGTH ? href : null;
    };
    const bases = [
      'http://a.test/x/y',
      'http://a.test/x/y/',
      'https://b.test',
      'http://a.test:8080/p/q?z=1#f',
      'https://u:p@c.test/d/',
      'http://127.0.0.1/x/',
      'http://[::1]/a/b',
      'HTTP://A.TEST/X/../Y',
      'http://a.test/a%20b/c',
      'javascript:x',
      'urn:x',
      'file:///x/y',
      'not a url',
    ];
    const prefixes = [
      '',
      '',
      '',
      'http://',
      'https://',
      'http://',
      'HTTP://',
      'http:',
      'https:/',
      '//',
      '/',
      '/',
      '\\',
      '/\\',
      './',
      '../',
      '.',
      '%2e/',
      'a:',
      'javascript:',
      '?',
      '#',
      ' ',
      '\t',
    ];
    const hosts = [
      'a.test',
      'www.example.com',
      'A.test',
      'xn--nxasmq6b.test',
      'xn--a.test',
      'a.xn--b',
      'a..test',
      'a.test.',
      '1.2.3.4',
      '0x7f.1',
      'a.1',
      'a.0x1',
      'a.test:80',
      'a.test:8080',
      'u@a.test',
      '\u00e9.test',
      '-a-.test',
      'ab--cd.test',
      'a_b.test',
      '[::1]',
      'localhost',
      '123',
      '',
    ];
    const pieces = [
      'p',
      'index.html',
      '/',
      '/p',
      '/./',
      '/../',
      '..',
      '.',
      '%2e',
      '%2E%2e',
      '.x',
      'a b',
      'a%20b',
      '\u00e9',
      '"',
      "'",
      '<',
      '>',
      '`',
      '{',
      '}',
      '|',
      '^',
      '[',
      ']',
      '\\',
      '~',
      '@',
      ':',
      ';',
      '=',
      '&',
      '+',
      ',',
      '!',
      '$',
      '*',
      '(',
      ')',
      '%',
      '%zz',
      '\u0000',
      '\n',
      '//',
      '-',
      '_',
    ];
    const queries = ['', '', '?', '?a=1&b=2', "?q='x'", '?a b', '?\u00e9', '?a/b?c', '?`', '?{}', '?%41'];
    const fragments = ['', '', '#', '#f', '#a#b', "#'x'", '#a b', '#\u00e9', '#`', '#<', '#/x?y'];
    const random = seededRandom(28); // the same cases on every run
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    // Most parts plain (the quick path's), the others anything the parser treats apart.
    const plain = ['p', 'index.html', 'a-b_c~d', '2024', 'x.jpg', 'q=1&r=(2)', "it's", 'a:b', '@me', '%41'];
    const mostly = <T>(usual: readonly T[], any: readonly T[]) => (random() < 0.7 ? pick(usual) : pick(any));
    let quick = 0;
    for (let n = 0; n < 30_000; n++) {
      const prefix = mostly(['', '/', 'http://', 'https://'], prefixes);
      let value = prefix + (/^[a-z]+:\/\/$/i.test(prefix) || prefix === '//' ? mostly(['a.test', 'www.example.com'], hosts) : '');
      for (let k = Math.floor(random() * 4); k > 0; k--) value += (random() < 0.5 ? '/' : '') + mostly(plain, pieces);
      value += mostly(['', '?a=1&b=2'], queries) + mostly(['', '#f'], fragments);
      const base = pick(bases);
      if (quickResolve(value.trim(), base) !== undefined) quick++;
      expect(resolveHttpUrl(value, base), `${value} against ${base}`).toBe(parser(value, base));
    }
    // the quick path answered often enough for the comparison to mean something
    expect(quick).toBeGreaterThan(4_000);
  });
});
