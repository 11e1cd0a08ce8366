/**
 * The quick well-formedness check is held to the validator: it may answer "well-formed" only for
 * a document the validator accepts (xml-check.ts), and every malformed document keeps the
 * validator's reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rssDocument } from '../../test/fixtures/feeds/feed-server.js';
import { validatorProblem, xmlProblem } from './xml-check.js';
import { quickWellFormed } from './xml-quick-check.js';
import { seededRandom } from '../lib/seeded-random.js';

const DOCUMENTS = path.resolve(import.meta.dirname, '../../test/fixtures/feeds/documents');

/** Malformed documents of each kind the validator refuses, with the start of its reason. */
const MALFORMED: [string, string][] = [
  ['<rss><channel><item></channel></rss>', "Expected closing tag 'item'"],
  ['<rss><channel><title>t</title>', "Invalid '["],
  ['<rss><channel>', "Invalid '["],
  ['<rss>', "Unclosed tag 'rss'"],
  ['<rss></rss><rss></rss>', 'Multiple possible root nodes found'],
  ['<rss></rss>text', 'Extra text at the end'],
  ['</rss>', "Closing tag 'rss' has not been opened"],
  ['<rss></rss></rss>', "Closing tag 'rss' has not been opened"],
  ['<rss><a x=1/></rss>', "Attribute 'x' is without value"],
  ['<rss><a x/></rss>', "boolean attribute 'x' is not allowed"],
  ['<rss><a x="1"y="2"/></rss>', "Attribute 'y' has no space in starting"],
  ['<rss><a x="1" x="2"/></rss>', "Attribute 'x' is repeated"],
  ['<rss><a x="1/></rss>', "Attributes for 'a' have open quote"],
  ['<rss><a 1x="1"/></rss>', "Attribute '1x' is an invalid name"],
  ['<rss><1a/></rss>', "Tag '1a' is an invalid name"],
  ['<rss>a < b</rss>', "Invalid space after '<'"],
  ['<rss></rss foo>', "Closing tag 'rss' can't have attributes or invalid starting"],
  ['<rss><a>x</a', "Closing tag 'a' doesn't have proper closing"],
  ['<rss>&a.b;</rss>', "char '&' is not expected"],
  ['<rss>&abcdefghijklmnopqrstu;</rss>', "char '&' is not expected"],
  ['\u0000<rss/>', "char 'U+0000' is not expected"],
  ['x<rss/>', "char 'x' is not expected"],
  ['<!-- c --><?xml version="1.0"?><rss/>', 'XML declaration allowed only at the start of the document'],
  ['', 'Start tag expected'],
  ['<!-- only a comment -->', 'Start tag expected'],
];

describe('quickWellFormed', () => {
  it.each(MALFORMED)('leaves %j to the validator, which refuses it with its reason', (doc, reason) => {
    expect(quickWellFormed(doc)).toBe(false);
    const problem = xmlProblem(doc);
    expect(problem).toBe(validatorProblem(doc));
    expect(problem).toContain(reason);
  });

  it('vouches for ordinary feeds: declaration, doctype, comments, CDATA, entities, a forgiven bare &', () => {
    for (const doc of [
      '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE rss [<!ENTITY e "v">]>\n<!-- c -->\n<rss version="2.0"><channel/></rss>\n<!-- end -->\n',
      "<feed xmlns='http://www.w3.org/2005/Atom' xml:lang = \"en\"><title type='html'>&lt;b&gt;AT&amp;T&lt;/b&gt; &#38; &#x26; &nbsp;</title></feed>",
      '<rss><channel><item><description><![CDATA[<p>a < b & c]]></description><?php echo 1; ?></item></channel></rss>',
      '<rss><channel><title>AT&T & R&D &; &#; &a-b &#x;</title></channel></rss>',
      '<rdf:RDF xmlns:rdf="x"><item rdf:about="u"><dc:date>d</dc:date></item></rdf:RDF>',
      '<rss>\u0000 and other characters the validator does not look at: > ]]> "</rss>',
      rssDocument('http://b.test', 'quick', 20, { pad: 2 }),
    ]) {
      expect(validatorProblem(doc)).toBeNull();
      expect(quickWellFormed(doc)).toBe(true);
    }
  });

  it('agrees with the validator on every fixture document', () => {
    const files = readdirSync(DOCUMENTS).filter((f) => /\.(xml|json)$/.test(f));
    expect(files.length).toBeGreaterThan(20);
    let vouched = 0;
    for (const file of files) {
      const doc = readFileSync(path.join(DOCUMENTS, file), 'latin1').replace(/^[\s\uFEFF]+/, '');
      if (quickWellFormed(doc)) {
        vouched++;
        expect(validatorProblem(doc), file).toBeNull();
      }
      expect(xmlProblem(doc), file).toBe(validatorProblem(doc));
    }
    expect(vouched).toBeGreaterThan(files.length / 2);
  });

  it('never vouches for a document the validator refuses (20,000 mutations of well-formed feeds)', () => {
    const random = seededRandom(28); // the same cases on every run
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const seeds = [
      '<?xml version="1.0"?><!DOCTYPE rss><rss version="2.0"><channel><title>T &amp; t</title><item><link>http://a.test/1</link><guid isPermaLink="false">g</guid><description><![CDATA[<p>x</p>]]></description></item><!-- c --></channel></rss>',
      `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://b.test/"><entry><title type="html">&lt;b&gt;x&lt;/b&gt;</title><link rel="alternate" href="/e"/><content type='xhtml'><div xmlns="http://www.w3.org/1999/xhtml">AT&T <b>b</b></div></content></entry></feed>`,
      '<rdf:RDF xmlns:rdf="r" xmlns="p"><channel rdf:about="c"><title>t</title></channel><item rdf:about="i"><title>&#8217; &#x2019;</title></item></rdf:RDF>',
    ];
    const pieces = [
      '<',
      '>',
      '/',
      '&',
      ';',
      '"',
      "'",
      '=',
      ' ',
      '\n',
      '!',
      '?',
      '-',
      '[',
      ']',
      'a',
      'x',
      '#',
      '.',
      '<a>',
      '</a>',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<?',
      '?>',
      '&amp;',
      '&a.b;',
      '<?xml ?>',
      '<b/>',
      ' c="d"',
      '\t',
      '\u00e9',
      '\u0000',
      'DOCTYPE',
    ];
    let vouched = 0;
    for (let n = 0; n < 20_000; n++) {
      let doc = pick(seeds);
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (doc.length + 1));
        const kind = random();
        if (kind < 0.4) doc = doc.slice(0, at) + pick(pieces) + doc.slice(at);
        else if (kind < 0.7) doc = doc.slice(0, at) + doc.slice(at + 1 + Math.floor(random() * 4));
        else if (kind < 0.85) doc = doc.slice(0, at);
        else {
          const from = Math.floor(random() * doc.length);
          doc = doc.slice(0, at) + doc.slice(from, from + Math.floor(random() * 20)) + doc.slice(at);
        }
      }
      if (!quickWellFormed(doc)) continue;
      vouched++;
      expect(validatorProblem(doc), doc).toBeNull();
    }
    // The check above would be empty if the quick check vouched for nothing.
    expect(vouched).toBeGreaterThan(2000);
  });
});
