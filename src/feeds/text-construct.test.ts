import { describe, expect, it } from 'vitest';
import { decodeTextConstruct, htmlOf, htmlToText, htmlToTextByParser, MAX_TEXT_LENGTH, plainText } from './text-construct.js';
import { seededRandom } from '../lib/seeded-random.js';

describe('text-construct', () => {
  it('turns HTML into the text a reader sees', () => {
    expect(htmlToText('  <b>Bold</b>&amp;<i>it</i>&nbsp;&#x41;\n\n x ')).toBe('Bold&it A x');
    expect(htmlToText('<p>one</p><p>two</p><script>alert(1)</script><style>p{}</style>')).toBe('one two');
    expect(htmlToText('a < b and c > d')).toBe('a < b and c > d');
    expect(htmlToText('nul\u0000 and bell\u0007')).toBe('nul and bell');
  });

  it('gives the text of inline markup without the parser exactly as the parser does', () => {
    // mostly inline tags and text (the quick path's), else anything the parser reads otherwise
    const usual = ['<b>', '</b>', '<em>', '</em>', '<code>', '</code>', '<a>', '</a>', '<i>', '</span>', 'word', ' ', '  ', '\n', '> '];
    const other = [
      '<B>',
      '<b >',
      '<b/>',
      '<p>',
      '</p>',
      '<br>',
      '<table>',
      '<script>',
      '</script>',
      '<a href="x">',
      '<x:b>',
      '<!-- c -->',
      '<',
      '&amp;',
      '&',
      '\t',
      '\u00a0',
      '\u0000',
      '\u0007',
      'é',
    ];
    const random = seededRandom(28); // the same cases on every run
    for (let n = 0; n < 20_000; n++) {
      let html = '';
      for (let k = 1 + Math.floor(random() * 8); k > 0; k--) {
        const from = random() < 0.8 ? usual : other;
        html += from[Math.floor(random() * from.length)];
      }
      expect(htmlToText(html), html).toBe(htmlToTextByParser(html));
    }
    expect(htmlToText('Rich <b>item</b> <code>0</code>')).toBe('Rich item 0');
  });

  it('drops comments, a never-closed one up to its first >, and keeps the text after them', () => {
    expect(htmlToText('sa<!-- a comment -->fe')).toBe('safe');
    expect(htmlToText('sa<!-- -- nonwhitespace >fe<script>alert(1);</script>')).toBe('safe');
    expect(htmlToText('a<!-- one -->b<!-- two > c')).toBe('ab c');
    expect(htmlToText('a<!-- never closed')).toBe('a');
  });

  it('never shows the content of script or style, closed or not, in any case', () => {
    expect(htmlToText('safe<SCRIPT type="text/javascript">location.href="x"</SCRIPT> description')).toBe('safe description');
    expect(htmlToText('<style>p { color: red }</style>Styled <script>document.write(1)</script>title')).toBe('Styled title');
    expect(htmlToText('a<script>evil()</script\n\n>b')).toBe('ab');
    expect(htmlToText('text<script>never closed')).toBe('text');
    expect(htmlToText('<x:div><x:script>evil()</x:script>kept</x:div>')).toBe('kept');
    // an object's content is its fallback, which a reader sees
    expect(htmlToText('safe<object classid="x"> description')).toBe('safe description');
  });

  it('decodes by type and mode', () => {
    expect(decodeTextConstruct({ value: 'PGI+eDwvYj4=', type: 'text/html', mode: 'base64' }, 'text')).toEqual({ kind: 'html', value: '<b>x</b>' });
    expect(decodeTextConstruct({ value: 'eA==', type: 'text/plain', mode: 'base64' }, 'html')).toEqual({ kind: 'text', value: 'x' });
    expect(decodeTextConstruct({ value: 'not base64!', mode: 'base64' }, 'text')).toBeNull();
    expect(decodeTextConstruct({ value: '<p>x</p>', type: 'xhtml' }, 'text')).toEqual({ kind: 'html', value: '<p>x</p>' });
    expect(decodeTextConstruct({ value: 'a<b', type: 'text' }, 'html')).toEqual({ kind: 'text', value: 'a<b' });
    expect(decodeTextConstruct({ value: 'iVBORw0KGgo=', type: 'image/png', mode: 'base64' }, 'text')).toBeNull();
    // Atom 1.0: another MIME type means base64, kept when it decodes to text
    expect(decodeTextConstruct({ value: '\n  RXhhbXBsZSA8Yj5BdG9tPC9iPg==\n', type: 'application/octet-stream' }, 'text')).toEqual({
      kind: 'html',
      value: 'Example <b>Atom</b>',
    });
    expect(decodeTextConstruct({ value: 'iVBORw0KGgo=', type: 'image/png' }, 'text')).toBeNull();
    expect(decodeTextConstruct({ value: 'AAECAw==', type: 'application/octet-stream' }, 'text')).toBeNull(); // bytes 0-3: not text
    expect(decodeTextConstruct({ value: 'not base64!', type: 'application/octet-stream' }, 'text')).toBeNull();
    expect(decodeTextConstruct({ value: 'x' }, 'html')).toEqual({ kind: 'html', value: 'x' });
    expect(decodeTextConstruct({ value: '   ' }, 'html')).toBeNull();
  });

  it('stores text as escaped HTML, and titles as bounded plain text', () => {
    expect(htmlOf({ kind: 'text', value: 'a < b & <i>c</i>' })).toBe('a &lt; b &amp; &lt;i&gt;c&lt;/i&gt;');
    expect(htmlOf({ kind: 'html', value: '<i>c</i>' })).toBe('<i>c</i>');
    expect(plainText({ kind: 'html', value: '<img src=x onerror=alert(1)>T&amp;T' })).toBe('T&T');
    expect(plainText({ kind: 'text', value: 'x'.repeat(MAX_TEXT_LENGTH + 10) })!.length).toBe(MAX_TEXT_LENGTH);
    expect(plainText({ kind: 'html', value: '<script>x</script>' })).toBeNull();
  });
});
