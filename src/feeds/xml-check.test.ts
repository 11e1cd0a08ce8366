import { describe, expect, it } from 'vitest';
import { itemKey, pairItemNotes, scanXml } from './xml-annotations.js';
import { localName, xmlProblem, xmlRoot } from './xml-check.js';

describe('xml-check', () => {
  it('finds the root element after the prolog', () => {
    expect(xmlRoot('<?xml version="1.0"?>\n<!-- c --><!DOCTYPE rss [<!ENTITY e "v">]>\n<rss version="2.0"/>')).toBe('rss');
    expect(xmlRoot('<rdf:RDF xmlns:rdf="x"/>')).toBe('rdf:RDF');
    expect(localName('rdf:RDF')).toBe('rdf');
    expect(xmlRoot('just text')).toBeNull();
  });

  it('tells why a document is not well-formed, and forgives a bare ampersand', () => {
    expect(xmlProblem('<a><b></a>')).toMatch(/^Expected closing tag 'b' .*\(line 1, column \d+\)$/);
    expect(xmlProblem('<a></a><b></b>')).toMatch(/Multiple possible root nodes/);
    expect(xmlProblem('<a x=1/>')).toMatch(/Attribute 'x'/);
    expect(xmlProblem('<a>AT&T &nbsp; &amp; &#38; &#x26;</a>')).toBeNull();
    // a control character in the reason is shown by its code point (PostgreSQL cannot store a NUL)
    expect(xmlProblem('\u0000<a/>')).toBe("char 'U+0000' is not expected (line 1, column 1)");
  });
});

describe('xml-annotations', () => {
  const rss = `<rss><channel xml:base="http://b.test/c/"><item/><item xml:base="i/"><link>one</link><guid>g1</guid></item><item><foo/></item><item><link>two</link></item></channel></rss>`;

  it('records the base of each item in document order', () => {
    const notes = scanXml(rss, 'http://doc.test/feed', 'rss');
    expect(notes.channel.base).toBe('http://b.test/c/');
    expect(notes.items.map((i) => [i.base, i.key])).toEqual([
      ['http://b.test/c/', itemKey('', '')],
      ['http://b.test/c/i/', itemKey('one', 'g1')],
      ['http://b.test/c/', itemKey('', '')],
      ['http://b.test/c/', itemKey('two', '')],
    ]);
  });

  it("pairs the parser's items, which leave out empty ones, with the scanned ones by key", () => {
    const notes = scanXml(rss, 'http://doc.test/feed', 'rss');
    const parsed = [
      { link: 'one', guid: 'g1' },
      { link: 'two', guid: null },
      { link: 'unknown', guid: null },
    ];
    const paired = pairItemNotes(parsed, (p) => itemKey(p.link, p.guid), notes);
    expect(paired.map((n) => n.base)).toEqual(['http://b.test/c/i/', 'http://b.test/c/', 'http://b.test/c/']);
    expect(paired[0]).toBe(notes.items[1]);
    expect(paired[1]).toBe(notes.items[3]);
    expect(paired[2]).toBe(notes.channel);
  });
});
