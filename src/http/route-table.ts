/**
 * Route matching, with no I/O: which declared route a method and path go to, with the path's
 * params; or, for a path that is declared but not for that method, the methods it takes.
 *
 * The path is split once; only the routes with that many segments are compared, segment by
 * segment. Paths are literal segments and `:params` only (anything else is refused when the table
 * is built). As express did: literal segments ignore case, one trailing slash is allowed, params
 * are percent-decoded (a malformed escape is a 400 naming the param), HEAD goes to the GET route.
 */
import { InvalidInputError } from '../errors.js';

type Segment = string | { param: string };

interface PathEntry<T> {
  /** As declared (`/api/pools/:type/:groupId/pop`): the route's label in metrics and logs. */
  path: string;
  segments: Segment[];
  /** Routes by method (upper case), in declaration order. */
  methods: Map<string, T>;
}

export type RouteMatch<T> =
  | { kind: 'route'; route: T; path: string; params: Record<string, string> }
  /** The path is declared, the method is not: the methods it takes (HEAD with GET), for Allow. */
  | { kind: 'other-method'; path: string; allow: string[] };

function compile(path: string): Segment[] {
  if (!path.startsWith('/')) throw new Error(`route path "${path}" must start with /`);
  return path
    .split('/')
    .slice(1)
    .map((s) => {
      if (/^:\w+$/.test(s)) return { param: s.slice(1) };
      if (/^[\w.~-]+$/.test(s)) return s.toLowerCase();
      throw new Error(`route path "${path}": segment "${s}" is neither a literal nor a :param`);
    });
}

function decodeParam(name: string, raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new InvalidInputError('invalid_request', `${name}: malformed percent-encoding in the path`, { field: name });
  }
}

/** The params of `parts` (a split path without its leading '') when they fit `segments`. */
function match(segments: Segment[], parts: string[]): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const part = parts[i + 1]!;
    if (typeof s === 'string') {
      if (part !== s && part.toLowerCase() !== s) return undefined;
    } else {
      if (!part) return undefined;
      (params ??= {})[s.param] = part;
    }
  }
  params ??= {};
  for (const s of segments) if (typeof s !== 'string') params[s.param] = decodeParam(s.param, params[s.param]!);
  return params;
}

export class RouteTable<T> {
  private readonly byLength = new Map<number, PathEntry<T>[]>();

  constructor(routes: { method: string; path: string; route: T }[]) {
    const byPath = new Map<string, PathEntry<T>>();
    for (const { method, path, route } of routes) {
      let entry = byPath.get(path);
      if (!entry) {
        entry = { path, segments: compile(path), methods: new Map() };
        byPath.set(path, entry);
        const sameLength = this.byLength.get(entry.segments.length) ?? [];
        sameLength.push(entry);
        this.byLength.set(entry.segments.length, sameLength);
      }
      const upper = method.toUpperCase();
      if (entry.methods.has(upper)) throw new Error(`route ${upper} ${path} is declared twice`);
      entry.methods.set(upper, route);
    }
  }

  /**
   * The route for `method` and `pathname` (the URL without its query), undefined when no declared
   * path fits. Throws InvalidInputError for a param with a malformed percent-escape.
   */
  match(method: string, pathname: string): RouteMatch<T> | undefined {
    let path = pathname;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const parts = path.split('/');
    const candidates = this.byLength.get(parts.length - 1);
    if (!candidates) return undefined;
    let declared: PathEntry<T> | undefined;
    for (const entry of candidates) {
      const params = match(entry.segments, parts);
      if (!params) continue;
      const route = entry.methods.get(method) ?? (method === 'HEAD' ? entry.methods.get('GET') : undefined);
      if (route !== undefined) return { kind: 'route', route, path: entry.path, params };
      declared ??= entry;
    }
    if (!declared) return undefined;
    const allow = [...declared.methods.keys()];
    if (allow.includes('GET')) allow.push('HEAD');
    return { kind: 'other-method', path: declared.path, allow };
  }
}
