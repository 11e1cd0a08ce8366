import { describe, expect, it } from 'vitest';
import { decodeTextConstruct, htmlOf, htmlToText, MAX_TEXT_LENGTH, plainText } from './text-construct.js';

describe('text-construct', () => {
  it('turns HTML into the text a reader sees', () => {
    expect(htmlToText('  <b>Bold</b>&amp;<i>it</i>&nbsp;&#x41;\n\n x ')).toBe('Bold&it A x');
    expect(htmlToText('<p>one</p><p>two</p><script>alert(1)</script><style>p{}</style>')).toBe('one two');
    expect(htmlToText('a < b and c > d')).toBe('a < b and c > d');
    expect(htmlToText('nul\u0000 and bell\u0007')).toBe('nul and bell');
  });

  it('decodes by type and mode', () => {
    expect(decodeTextConstruct({ value: 'PGI+eDwvYj4=', type: 'text/html', mode: 'base64' }, 'text')).toEqual({ kind: 'html', value: '<b>x</b>' });
    expect(decodeTextConstruct({ value: 'eA==', type: 'text/plain', mode: 'base64' }, 'html')).toEqual({ kind: 'text', value: 'x' });
    expect(decodeTextConstruct({ value: 'not base64!', mode: 'base64' }, 'text')).toBeNull();
    expect(decodeTextConstruct({ value: '<p>x</p>', type: 'xhtml' }, 'text')).toEqual({ kind: 'html', value: '<p>x</p>' });
    expect(decodeTextConstruct({ value: 'a<b', type: 'text' }, 'html')).toEqual({ kind: 'text', value: 'a<b' });
    expect(decodeTextConstruct({ value: 'iVBORw0KGgo=', type: 'image/png', mode: 'base64' }, 'text')).toBeNull();
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
