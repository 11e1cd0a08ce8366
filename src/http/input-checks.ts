/**
 * Checks every request's input as a whole, before its route's schema: text that could not be
 * stored as sent is refused wherever it appears (the schemas need not remember it), and so is a
 * query field given twice.
 *
 * - A lone surrogate (half of a UTF-16 pair) has no UTF-8 form: PostgreSQL refuses it, and a
 *   UTF-8 encoder replaces it with U+FFFD, so it would be stored changed, or not at all.
 * - NUL (U+0000) is refused by PostgreSQL's text type.
 */

/** Any UTF-16 code unit of a surrogate that is not part of a pair (with `u`, a pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

export type TextProblem = 'lone_surrogate' | 'nul';

export function textProblem(s: string): TextProblem | undefined {
  if (s.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(s)) return 'lone_surrogate';
  return undefined;
}

export const TEXT_PROBLEM_MESSAGE: Record<TextProblem, string> = {
  nul: 'must not contain NUL (U+0000) characters',
  lone_surrogate: 'must not contain a lone UTF-16 surrogate (text that has no UTF-8 form)',
};

/**
 * The first string, or object key, in a JSON value that holds a lone surrogate or NUL, with its
 * path (`items.3.text`). Walks iteratively: a body nested thousands deep is no stack overflow.
 */
export function findTextProblem(value: unknown): { path: string; problem: TextProblem } | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { path, problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: join(path, i) });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const problem = textProblem(key);
        if (problem) return { path: join(path, '(key)'), problem };
        stack.push({ value: child, path: join(path, key) });
      }
    }
  }
  return undefined;
}

/** The first query field given more than once (its value is then an array). */
export function repeatedQueryField(query: Record<string, unknown>): string | undefined {
  for (const [name, value] of Object.entries(query)) if (Array.isArray(value)) return name;
  return undefined;
}

/**
 * The first query field whose name or value is not valid percent-encoded UTF-8 (e.g. `%ED%A0%80`,
 * a lone surrogate in UTF-8 form). The query parser keeps such text as it came, undecoded, so a
 * free-text field would otherwise take the escape sequence itself as its value.
 */
export function malformedQueryField(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at < 0) return undefined;
  for (const pair of url.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    const rawName = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1).replace(/\+/g, ' ');
    let name = rawName;
    try {
      name = decodeURIComponent(rawName);
      decodeURIComponent(rawValue);
    } catch {
      return name || '(query)';
    }
  }
  return undefined;
}
