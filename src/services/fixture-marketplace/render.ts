/**
 * HTML of the fixture marketplace. Result pages carry their items as JSON and render them as a
 * virtual list: only the rows in (or near) the viewport exist in the DOM, and scrolling
 * replaces them, like the real site. Every page also asks for a web font, an analytics script
 * and one image per row, which the crawler must block.
 */
import type { FixtureItem, FixtureStatus } from './catalog.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON safe inside a <script> element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="preload" href="/fonts/noto-sans.woff2" as="font" type="font/woff2" crossorigin>
<style>@font-face{font-family:FixtureSans;src:url(/fonts/noto-sans.woff2) format("woff2")}
body{font-family:FixtureSans,sans-serif;margin:0;color:#222}header{height:96px;padding:8px 16px;background:#f5f5f5}
#item-list{position:relative;list-style:none;margin:0;padding:0}
#item-list li{position:absolute;left:0;right:0;box-sizing:border-box;border-bottom:1px solid #eee;padding:4px 16px}
#item-list a{display:flex;gap:12px;align-items:center;color:inherit;text-decoration:none}
#item-list img{width:48px;height:48px;background:#ddd}footer{padding:16px}</style>
<script async src="/analytics.js"></script>${head}
</head><body>${body}</body></html>`;
}

/** The virtual list, run by the browser on a results page. */
const VIRTUAL_LIST = `(() => {
  const data = JSON.parse(document.getElementById('__DATA__').textContent);
  const list = document.getElementById('item-list');
  const ROW = data.rowHeight, OVERSCAN = 3, items = data.items;
  list.style.height = items.length * ROW + 'px';
  let shown = '';
  function row(item, index) {
    const li = document.createElement('li');
    li.dataset.testid = 'item-cell';
    li.dataset.itemId = item.sourceId;
    li.style.top = index * ROW + 'px';
    li.style.height = ROW + 'px';
    const a = document.createElement('a');
    a.dataset.testid = 'thumbnail-link';
    a.href = '/item/' + item.sourceId;
    const img = document.createElement('img');
    img.src = '/img/' + item.sourceId + '.jpg';
    img.alt = '';
    const name = document.createElement('span');
    name.dataset.testid = 'item-name';
    name.textContent = item.title;
    const price = document.createElement('span');
    price.dataset.testid = 'item-price';
    price.textContent = '¥' + item.price.toLocaleString('ja-JP');
    a.append(img, name, price);
    li.append(a);
    return li;
  }
  function render() {
    const top = list.getBoundingClientRect().top + window.scrollY;
    const first = Math.max(0, Math.floor((window.scrollY - top) / ROW) - OVERSCAN);
    const last = Math.min(items.length, Math.ceil((window.scrollY - top + window.innerHeight) / ROW) + OVERSCAN);
    const key = first + ':' + last;
    if (key === shown) return;
    shown = key;
    list.replaceChildren(...items.slice(first, last).map((item, i) => row(item, first + i)));
  }
  window.addEventListener('scroll', render, { passive: true });
  window.addEventListener('resize', render);
  render();
})();`;

export interface ResultsPage {
  keyword: string;
  status: FixtureStatus;
  page: number;
  items: FixtureItem[];
  rowHeight: number;
}

export function renderResults(p: ResultsPage): string {
  const statusParam = p.status === 'sold' ? 'sold_out' : 'on_sale';
  const next = `/search?${new URLSearchParams({ keyword: p.keyword, status: statusParam, page: String(p.page + 1) })}`;
  const data = { rowHeight: p.rowHeight, items: p.items.map(({ sourceId, title, price }) => ({ sourceId, title, price })) };
  return layout(
    `${p.keyword} の検索結果 | Fixture Marketplace`,
    `<header><h1>Fixture Marketplace</h1><p>${escapeHtml(p.keyword)}: ${statusParam}, page ${p.page}</p></header>
<main><ul id="item-list" data-testid="search-results"></ul></main>
<footer><a href="${escapeHtml(next)}">次へ</a></footer>
<script id="__DATA__" type="application/json">${scriptJson(data)}</script>
<script>${VIRTUAL_LIST}</script>`,
  );
}

export function renderNoResults(keyword: string): string {
  return layout(
    `${keyword} の検索結果 | Fixture Marketplace`,
    `<header><h1>Fixture Marketplace</h1></header><main><p data-testid="search-no-results">「${escapeHtml(keyword)}」に一致する商品は見つかりませんでした。 No items found.</p></main>`,
  );
}

export function renderForbidden(): string {
  return layout('403 Forbidden', '<h1>Access denied</h1><p>Your address has been blocked.</p>');
}

export function renderRateLimited(): string {
  return layout('429 Too Many Requests', '<h1>Too Many Requests</h1><p>Please slow down.</p>');
}

export function renderCaptcha(): string {
  return layout(
    'Security check',
    '<h1>Security check</h1><p>Please verify you are human to continue.</p><div class="g-recaptcha" data-sitekey="fixture"></div><iframe src="/captcha/frame" title="captcha"></iframe>',
  );
}

export function renderServerError(): string {
  return layout('500 Internal Server Error', '<h1>Something went wrong</h1>');
}

export function renderHome(): string {
  return layout(
    'Fixture Marketplace',
    '<header><h1>Fixture Marketplace</h1></header><main><form action="/search"><input name="keyword"><button>Search</button></form></main>',
  );
}

export function renderItem(item: FixtureItem | undefined, sourceId: string): string {
  if (!item) return layout('Not found', `<h1>No item ${escapeHtml(sourceId)}</h1>`);
  return layout(item.title, `<h1>${escapeHtml(item.title)}</h1><p>¥${item.price} (${item.status})</p><img src="/img/${escapeHtml(item.sourceId)}.jpg" alt="">`);
}
