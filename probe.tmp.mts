import { sanitizeContent } from './src/feeds/sanitize-content.ts';
const B = 'http://ex.test/dir/page';
for (const h of [
  '<p onclick="x()">hi <a href="/a?b=1&amp;c=2" target=_blank>l</a> <a href="java&#x09;script:alert(1)">j</a></p><script>alert(1)</script>',
  '<img src="x.png" srcset="a.png 1x, /b.png 2x, javascript:alert(1) 3x" onerror=alert(1)><img src="data:image/png;base64,iVBORw0KGgo="><img src="data:text/html,<script>">',
  '<iframe src="https://evil"></iframe><object data="x"></object><svg><script>alert(1)</script><text>t</text></svg>after',
  '<pre class="language-js foo"><code class="language-js">x &lt; 1</code></pre><div style="background:url(javascript:x)">s</div>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><link rel=stylesheet href=x><base href="http://evil/">ok',
  '<a href="mailto:a@b.c">m</a><a href="//evil.com/x">pr</a><a href="#frag">f</a><blockquote cite="/c">q</blockquote>',
  '<table><tr><td colspan=2 onmouseover=x>1</td></tr></table><noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
]) console.log(sanitizeContent(h, B));
