/**
 * The fast path is held to sanitize-html: on every input it answers null (sanitize-html runs) or
 * exactly what sanitize-html gives with the same options, and it does answer for the HTML feeds
 * usually carry. The inputs: the hostile and rich corpora, every string of every feed document of
 * the test fixtures (the feedparser ones too) and those documents whole, every pair of nested
 * elements, generated fragments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseFeed } from 'feedsmith';
import sanitizeHtml from 'sanitize-html';
import { describe, expect, it } from 'vitest';
import { HOSTILE_HTML, RICH_HTML } from '../../test/fixtures/feeds/hostile-html.js';
import { decodeFeedBody } from './decode-body.js';
import { ALLOWED_TAGS, rewriteUrls, SANITIZE_POLICY, sanitizeContent, sanitizeOptions, URL_REWRITING } from './sanitize-content.js';
import { compileFastSanitizer, tagTransform } from './sanitize-fast-path.js';
import { VOID_ELEMENTS } from './sanitize-rules.js';
import { hasControls, stripControls } from './text-construct.js';
import { seededRandom } from '../lib/seeded-random.js';

const BASE = 'http://feed.example.test/blog/feed.xml';
const POLICY = SANITIZE_POLICY;
const rewrite = rewriteUrls(BASE);
const fast = compileFastSanitizer(POLICY, URL_REWRITING);

/** The fast path's answer, checked against sanitize-html's: true when it answered. */
function agrees(html: string): boolean {
  const answer = fast(html, rewrite);
  if (answer !== null) expect(answer, html).toBe(stripControls(sanitizeHtml(html, sanitizeOptions(BASE))));
  return answer !== null;
}

const DOCUMENTS = new URL('../../test/fixtures/feeds/documents/', import.meta.url);

/** Every string of a parsed feed (titles, summaries, contents, links, ids...). */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}

/** The feed documents of the test fixtures, decoded: each whole, and every string feedsmith reads from it. */
function fixtureCorpus(): { documents: string[]; strings: string[] } {
  const documents: string[] = [];
  const strings: string[] = [];
  for (const entry of readdirSync(DOCUMENTS, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(xml|json)$/.test(entry.name)) continue;
    const bytes = readFileSync(new URL(`${entry.parentPath}/${entry.name}`, 'file://'));
    let text: string;
    try {
      text = decodeFeedBody(bytes, null).text;
    } catch {
      continue; // a document the platform cannot decode (EBCDIC, invalid UTF-32): no text to sanitize
    }
    documents.push(text);
    try {
      stringsOf(parseFeed(text.replace(/^[\s\uFEFF]+/, '')).feed, strings);
    } catch {
      // not a feed feedsmith reads (CDF, malformed): the document whole is still compared
    }
  }
  return { documents, strings };
}

const ARTICLE =
  '<p>Intro with <a href="/posts/older">a relative link</a>, <em>emphasis</em> &amp; <code>inline()</code>.</p><!-- more -->' +
  '<figure><img src="img/photo.jpg" srcset="img/photo.jpg 1x, img/photo@2x.jpg 2x" alt="photo" width="640" height="480" onerror="track()"><figcaption>Caption</figcaption></figure>' +
  '<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a</td><td colspan="2">b</td></tr></tbody></table>' +
  '<pre class="language-js other"><code class="language-js">const x = a &lt; b &amp;&amp; c;</code></pre>' +
  "<ul><li>one</li><li>two <a href='https://other.example.test/x?a=1&b=2' target=_blank>out</a></li></ul>" +
  '<blockquote cite="/source">Quoted &ldquo;text&rdquo;&nbsp;&#8217;</blockquote><script>if (a < b) analytics()</script><iframe src="https://video.example.test/embed/1"></iframe>' +
  '<p style="color:red" onclick="x()">Closing <br/>paragraph<br>with <video controls src="v.mp4" poster="p.png"></video> and AT&T.</p>';

describe('sanitize fast path', () => {
  it('answers for a typical article, exactly as sanitize-html', () => {
    expect(agrees(ARTICLE)).toBe(true);
    expect(fast(ARTICLE, rewrite)).toContain('<a href="http://feed.example.test/posts/older" rel="nofollow noopener noreferrer">');
  });

  it('answers without the control characters stripControls removes, wherever they come from', () => {
    for (const html of [
      '<p>a\u0001b\u007fc\u000bd\u000ce</p>', // in text
      '<p>DEL\u007f alone</p>',
      '<p>tab\tnewline\ncarriage\r</p>', // whitespace is no control
      '<p>x &#1; y &#x7f; z</p>', // decoded from references in text
      '<img src="/i.png" alt="a\u0001b">', // in a value kept as written
      '<td colspan="2\u0002">x</td>', // in a tag otherwise written as it is
      '<img src="/i.png" alt="a&#1;b&#127;c">', // decoded from references in a value
      '<a href="mailto:a\u0001@b.test">m</a>', // in a value the rewrite keeps
      '<script>\u0001</script><p>dropped with its element</p><!-- \u0001 -->',
    ]) {
      expect(agrees(html), html).toBe(true);
      expect(hasControls(fast(html, rewrite)!), html).toBe(false);
    }
    expect(fast('<p>a\u0001b</p>', rewrite)).toBe('<p>ab</p>');
  });

  it('leaves to sanitize-html what its parser repairs or reads otherwise', () => {
    for (const html of [
      '<p>a<p>b</p></p>', // a <p> closes the open <p>
      '<ul><li>a<li>b</ul>',
      '<b><i>x</b></i>',
      '<p>unclosed',
      'stray </p>',
      '<br></br>',
      '<div/>text',
      '<svg><a href="x"/></svg>',
      '<p>R&D</p>', // `&D` runs up to the end of the text before a tag
      '<a href="?a&b">x</a',
      '<!DOCTYPE html><p>x</p>',
      '<?xml ?><p>x</p>',
      '<p>a</p><!-- unclosed',
      '<o:p>word</o:p>',
      '<script>x</script >',
      // the input ending inside a tag or a raw text's end tag
      'text <',
      '<p>x</p><',
      '<p>x</p></',
      '<p>x</p><b',
      '<img src="x',
      '<script>x</scr',
      '<script>x</script',
      '<style>a</style',
    ]) {
      expect(fast(html, rewrite), html).toBeNull();
    }
  });

  it('agrees with sanitize-html on the hostile and rich corpora', () => {
    let answered = 0;
    for (const html of [...HOSTILE_HTML, ...RICH_HTML.map((s) => s.html)]) if (agrees(html)) answered++;
    // most of the corpus is answered, so that the comparison above means something
    expect(answered).toBeGreaterThan(100);
  });

  it('agrees with sanitize-html on the feed documents of the test fixtures and every string in them', () => {
    const { documents, strings } = fixtureCorpus();
    expect(documents.length).toBeGreaterThan(50);
    let answered = 0;
    let answeredMarkup = 0;
    for (const html of [...documents, ...strings]) {
      if (!agrees(html)) continue;
      answered++;
      if (/[<&]/.test(html)) answeredMarkup++;
    }
    // and through sanitizeContent, whichever path it takes
    for (const html of strings) expect(sanitizeContent(html, BASE), html).toBe(stripControls(sanitizeHtml(html, sanitizeOptions(BASE))).trim() || null);
    // most of it answered, markup too (documents whole, HTML summaries and contents)
    expect(answered).toBeGreaterThan(200);
    expect(answeredMarkup).toBeGreaterThan(40);
  });

  it('agrees with sanitize-html on every pair of nested elements', () => {
    const names = [
      ...new Set([
        ...ALLOWED_TAGS,
        ...VOID_ELEMENTS,
        'font',
        'center',
        'section',
        'article',
        'nav',
        'script',
        'style',
        'title',
        'textarea',
        'iframe',
        'noscript',
        'object',
        'select',
        'option',
        'optgroup',
        'button',
        'input',
        'form',
        'dd',
        'dt',
        'body',
        'head',
        'template',
        'frame',
        'embed',
        'math',
        'svg',
        'xmp',
      ]),
    ];
    let answered = 0;
    for (const outer of names) {
      for (const inner of names) {
        const innerHtml = VOID_ELEMENTS.has(inner) ? `<${inner} title="t">` : `<${inner} title="t">x</${inner}>`;
        const html = VOID_ELEMENTS.has(outer) ? `<${outer}>${innerHtml}` : `<${outer}>${innerHtml}</${outer}>`;
        if (agrees(html)) answered++;
      }
    }
    expect(answered).toBeGreaterThan(names.length * names.length * 0.7);
  });

  it('agrees with sanitize-html on 5,000 generated fragments', () => {
    const random = seededRandom(20); // the same cases on every run
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const tags = [
      'p',
      'b',
      'i',
      'a',
      'img',
      'br',
      'hr',
      'wbr',
      'col',
      'source',
      'div',
      'span',
      'li',
      'ul',
      'table',
      'tr',
      'td',
      'pre',
      'code',
      'font',
      'center',
      'script',
      'style',
      'iframe',
      'noscript',
      'object',
      'embed',
      'title',
      'textarea',
      'select',
      'video',
      'picture',
      'details',
      'blockquote',
      'q',
      'P',
      'A',
      'IMG',
      'Script',
      'svg',
      'frame',
    ];
    const attrNames = [
      'href',
      'src',
      'srcset',
      'alt',
      'title',
      'class',
      'style',
      'onclick',
      'rel',
      'target',
      'width',
      'controls',
      'open',
      'poster',
      'cite',
      'lang',
      'dir',
      'name',
      'colspan',
      'HREF',
      'Alt',
      'xlink:href',
      'data-x',
      'reversed',
      'value',
      '__proto__',
    ];
    const values = [
      '',
      'x',
      '/a/b',
      '../c?d=1&e=2',
      'http://ex.test/p?q=1&amp;r=2',
      'javascript:alert(1)',
      ' java\tscript:x',
      'mailto:a@b.test',
      'data:image/png;base64,iVBOR=',
      'data:text/html,x',
      '//cdn.test/x',
      'img.jpg 1x, img@2x.jpg 2x',
      'a.jpg 100w, b.jpg 1.5x',
      'a.jpg 2.0x',
      'a.jpg 1x 2w',
      'language-js',
      ' lang-py  other ',
      '&lt;b&gt;',
      '&notit;',
      '&#0;',
      '&#x80;',
      'a"b',
      "a'b",
      '&copy=1',
      'http://ex.test/<!--x-->',
      '0',
      // written as the rewriting writes them: the tag may come out as it went in
      'http://feed.example.test/a/b',
      'nofollow noopener noreferrer',
    ];
    const texts = [
      'hello',
      '5 &gt; 3 &amp; 2 > 1',
      '&lt;b&gt;',
      '&amp',
      '&ampx;',
      '&LT;',
      ' ',
      '\n',
      'a & b',
      'AT&T ',
      '&amp;',
      '&lt;script&gt;',
      '&nbsp;',
      '&notit;',
      '&#8217;',
      '&#0;',
      '&#128;',
      '&copy ',
      '&bogus;',
      'a < b',
      '<3',
      '5 > 3',
      '\u0000',
      '\u00e9',
      '<!-- c -->',
      '<!-->',
      '<!-- unclosed',
      '<?pi?>',
      '</>',
      '<',
      '&',
    ];
    const attribute = () => {
      const name = pick(attrNames);
      const value = pick(values);
      const r = random();
      if (r < 0.5) return ` ${name}="${value.replace(/"/g, '&quot;')}"`;
      if (r < 0.65) return ` ${name}='${value.replace(/'/g, '&#39;')}'`;
      if (r < 0.8) return ` ${name}=${/[\s>"']/.test(value) || value === '' ? 'x' : value}`;
      return ` ${name}`;
    };
    const fragment = (depth: number): string => {
      let out = '';
      for (let parts = 1 + Math.floor(random() * 4); parts > 0; parts--) {
        if (random() < 0.35 || depth > 3) {
          out += pick(texts);
          continue;
        }
        const tag = pick(tags);
        let attrs = '';
        for (let n = Math.floor(random() * 3); n > 0; n--) attrs += attribute();
        out += `<${tag}${attrs}${pick(['', '', '', '', '', '', '', '/', ' /', ' '])}>${random() < 0.8 ? fragment(depth + 1) : ''}${random() < 0.9 ? `</${tag}>` : ''}`;
      }
      return out;
    };
    let answered = 0;
    for (let n = 0; n < 5000; n++) if (agrees(fragment(0))) answered++;
    expect(answered).toBeGreaterThan(500);
  });

  it('makes sanitizeContent give what sanitize-html gives', () => {
    for (const html of [ARTICLE, ...RICH_HTML.map((s) => s.html)]) {
      expect(sanitizeContent(html, BASE)).toBe(stripControls(sanitizeHtml(html, sanitizeOptions(BASE))).trim() || null);
    }
  });

  it('leaves sanitizeContent as it was: plain formatting as written, anything else as sanitize-html writes it', () => {
    // sanitizeContent before the fast path, its plain-formatting test a regular expression
    const PLAIN = new Set<string>(ALLOWED_TAGS.filter((t) => !['a', 'img', 'source', 'picture', 'video', 'audio', 'col'].includes(t)));
    const TOKEN = /<(\/?)([a-z][a-z0-9]*)(\s*\/)?>|[<>]|&(?![a-z][a-z0-9]*;|#[0-9]{1,7};|#x[0-9a-f]{1,6};)/gi;
    const wasPlain = (html: string) => {
      const open: string[] = [];
      TOKEN.lastIndex = 0;
      for (let m = TOKEN.exec(html); m; m = TOKEN.exec(html)) {
        const [, closing, name, selfClosing] = m;
        if (name === undefined || name !== name.toLowerCase() || !PLAIN.has(name)) return false;
        if (['br', 'hr', 'wbr'].includes(name)) {
          if (closing) return false;
        } else if (selfClosing) return false;
        else if (!closing) open.push(name);
        else if (open.pop() !== name) return false;
      }
      return open.length === 0;
    };
    const before = (html: string) =>
      (!/[<>&]/.test(html) || wasPlain(html) ? stripControls(html) : stripControls(sanitizeHtml(html, sanitizeOptions(BASE)))).trim() || null;
    const random = seededRandom(28); // the same cases on every run
    const pieces = [
      '<p>',
      '</p>',
      '<b>',
      '</b>',
      '<br>',
      '<br/>',
      '<br />',
      '<br\u00a0/>',
      '<b\u2028/>',
      '</br>',
      '<hr/>',
      '<p/>',
      '<P>',
      '<bR>',
      '<h1>',
      '</h1>',
      '<p1>',
      '<em>',
      '</em>',
      '<ul>',
      '<li>',
      '</li>',
      '</ul>',
      '<a>',
      '</a>',
      '<a href="/x">',
      'text',
      ' ',
      '&amp;',
      '&AMP;',
      '&nbsp;',
      '&#38;',
      '&#12345678;',
      '&#x1F600;',
      '&#X1f;',
      '&#x1234567;',
      '&',
      '&;',
      '&#;',
      '&1a;',
      '<',
      '>',
      '< p>',
      '<p >',
      '<table>',
      '<td>',
      '</td>',
      '<x>',
      '<!-- c -->',
      '\u0000',
      '\u0007',
      'é',
    ];
    let plain = 0;
    for (let n = 0; n < 5000; n++) {
      let html = '';
      for (let k = 1 + Math.floor(random() * 8); k > 0; k--) html += pieces[Math.floor(random() * pieces.length)];
      if (wasPlain(html)) plain++;
      expect(sanitizeContent(html, BASE), html).toBe(before(html));
    }
    expect(plain).toBeGreaterThan(200);
  });

  it('refuses options it does not model', () => {
    const compile = (options: sanitizeHtml.IOptions) => compileFastSanitizer(options, URL_REWRITING);
    expect(() => compile({ ...POLICY, disallowedTagsMode: 'escape' })).toThrow(/discard/);
    expect(() => compile({ ...POLICY, allowedTags: [...ALLOWED_TAGS, 'script'] })).toThrow(/script/);
    expect(() => compile({ ...POLICY, allowedAttributes: { ...POLICY.allowedAttributes, p: ['style'] } })).toThrow(/style/);
    expect(() => compile({ ...POLICY, allowedAttributes: { a: ['data-*'] } })).toThrow(/data-\*/);
    expect(() => compile({ ...POLICY, textFilter: (t) => t })).toThrow(/textFilter/);
    expect(() => compile({ ...POLICY, transformTags: { '*': tagTransform(URL_REWRITING, rewrite) } })).toThrow(/transformTags/);
    expect(() => compileFastSanitizer(POLICY, { attributes: ['href'], set: { a: { href: '/' } } })).toThrow(/both rewritten and set/);
    expect(() => compileFastSanitizer(POLICY, { attributes: [], set: { a: { rel: 'x\u0001' } } })).toThrow(/control character/);
  });
});
