/**
 * Code that runs inside the page, kept as strings on purpose: tsx/esbuild wrap compiled
 * functions in a `__name(...)` helper that does not exist in the page, so a function handed to
 * page.evaluate fails there ("__name is not defined"). Each builder takes plain data (the
 * adapter's selectors) and returns an expression.
 */
import type { RowSelectors } from './site-adapter.js';

/** CAPTCHA and challenge widgets of the common providers. */
const CHALLENGE_SELECTOR = [
  '.g-recaptcha',
  '.h-captcha',
  '.cf-turnstile',
  'iframe[src*="captcha"]',
  'iframe[src*="challenges.cloudflare.com"]',
  '#challenge-form',
  '#cf-challenge-running',
].join(', ');

/** The rendered result rows, as RawRow[]. */
export function readRowsScript(s: RowSelectors): string {
  return `(() => {
  const s = ${JSON.stringify(s)};
  const text = (el) => (el ? (el.textContent || '').trim() : null);
  return Array.from(document.querySelectorAll(s.row)).map((row) => {
    const link = row.matches(s.link) ? row : row.querySelector(s.link);
    const title = row.querySelector(s.title);
    const img = row.querySelector(s.image);
    return {
      id: s.idAttribute ? row.getAttribute(s.idAttribute) : null,
      href: link ? link.href || link.getAttribute('href') : null,
      title: title ? (s.titleAttribute ? title.getAttribute(s.titleAttribute) : text(title)) : null,
      price: text(row.querySelector(s.price)),
      image: img ? img.src || img.getAttribute('data-src') : null,
    };
  });
})()`;
}

/** What block detection needs (PageSnapshot without the HTTP status). */
export function snapshotScript(s: RowSelectors): string {
  return `(() => {
  const body = document.body ? document.body.innerText || '' : '';
  return {
    title: document.title || '',
    text: body.slice(0, 2000),
    rowCount: document.querySelectorAll(${JSON.stringify(s.row)}).length,
    noResults: !!document.querySelector(${JSON.stringify(s.noResults)}),
    challengeElement: !!document.querySelector(${JSON.stringify(CHALLENGE_SELECTOR)}),
  };
})()`;
}

/** True once result rows, the "no results" marker or a challenge widget are on the page. */
export function pageReadyExpression(s: RowSelectors): string {
  return `!!document.querySelector(${JSON.stringify(`${s.row}, ${s.noResults}, ${CHALLENGE_SELECTOR}`)})`;
}

/**
 * Scrolls one screen down, then waits until the rendered rows change (a virtual list re-renders
 * on scroll; an infinite list appends), seen by a MutationObserver, or `maxWaitMs` passes.
 * Resolves to whether the page moved and whether the rows changed. At the bottom nothing
 * moves and it resolves at once.
 */
export function scrollOneScreenScript(rowSelector: string, maxWaitMs: number): string {
  return `new Promise((resolve) => {
  const rows = () => {
    const r = document.querySelectorAll(${JSON.stringify(rowSelector)});
    return r.length + '|' + (r[0] ? r[0].textContent : '') + '|' + (r.length ? r[r.length - 1].textContent : '');
  };
  const before = rows();
  const y = window.scrollY;
  let observer;
  let timer;
  const finish = (changed) => {
    observer.disconnect();
    clearTimeout(timer);
    resolve({ moved: window.scrollY !== y, changed });
  };
  observer = new MutationObserver(() => { if (rows() !== before) finish(true); });
  observer.observe(document.body, { childList: true, subtree: true });
  timer = setTimeout(() => finish(rows() !== before), ${maxWaitMs});
  window.scrollBy(0, Math.round(window.innerHeight * 0.85));
  // at the bottom the page does not move: nothing will render
  setTimeout(() => { if (window.scrollY === y) finish(rows() !== before); }, 50);
})`;
}

/**
 * Back to the top after the human-like scrolling, and resolves once the list has re-rendered
 * there: the rendered rows changed (seen by a MutationObserver), or `maxWaitMs` passed. Rows
 * rendered for the old position can still overlap the viewport, so "rows are visible" is not
 * enough; reading before the re-render would skip the first rows.
 */
export function scrollToTopScript(rowSelector: string, maxWaitMs: number): string {
  return `new Promise((resolve) => {
  if (window.scrollY === 0) return resolve(0);
  const rows = () => {
    const r = document.querySelectorAll(${JSON.stringify(rowSelector)});
    return r.length + '|' + (r[0] ? r[0].textContent : '') + '|' + (r.length ? r[r.length - 1].textContent : '');
  };
  const before = rows();
  let observer;
  let timer;
  const finish = () => {
    observer.disconnect();
    clearTimeout(timer);
    resolve(window.scrollY);
  };
  observer = new MutationObserver(() => { if (rows() !== before) finish(); });
  observer.observe(document.body, { childList: true, subtree: true });
  timer = setTimeout(finish, ${maxWaitMs});
  window.scrollTo(0, 0);
})`;
}
