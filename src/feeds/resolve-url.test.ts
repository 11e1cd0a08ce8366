import { describe, expect, it } from 'vitest';
import { applyXmlBase, documentBase, MAX_URL_LENGTH, resolveHttpUrl } from './resolve-url.js';

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
});
