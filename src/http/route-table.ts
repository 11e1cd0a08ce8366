/**
 * The dispatch of the declared routes: one express middleware that finds a request's route by
 * its path segments and runs that route's handlers, instead of one express Router layer per route.
 *
 * Express matches a request against every layer in turn and, for nested routers, re-parses the
 * URL, trims and restores the path and merges params at every level: on the pool pop route that
 * was about a sixth of the API process's CPU per request (bench:pools). Here the path is split
 * once, the routes of that many segments are compared segment by segment, and the route's chain
 * runs directly. Paths are literal segments and `:params` only (what the routes declare; anything
 * else is refused when the table is built).
 *
 * Matching follows express's defaults: literal segments ignore case, one trailing slash is
 * allowed, params are percent-decoded (a malformed escape is a 400), HEAD is answered by the GET
 * route. A path that is declared but not for the request's method answers 405 with an Allow
 * header (OPTIONS: 204 with Allow). A request that matches no path goes on to the next
 * middleware (health, metrics, Bull Board, 404).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from '../errors.js';

type Segment = string | { param: string };

interface PathEntry {
  /** As declared (`/api/pools/:type/:groupId/pop`): the route's label in metrics and logs. */
  path: string;
  segments: Segment[];
  /** Handler chains by method (upper case). */
  methods: Map<string, Chain>;
}

export interface TableRoute {
  method: string;
  path: string;
  handlers: RequestHandler[];
}

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
    throw new HttpError(400, 'invalid_request', `${name}: malformed percent-encoding in the path`, name);
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

type Chain = (req: Request, res: Response, done: NextFunction) => void;

/** Calls one handler; a throw or a rejected promise goes to `next` as the error (as in express 5). */
function invoke(handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const result = handler(req, res, next) as unknown;
    if (result instanceof Promise) result.catch(next);
  } catch (thrown) {
    next(thrown ?? new Error('a route handler threw a nullish value'));
  }
}

/**
 * The handlers as one chain, express style: `next()` goes on, `next(err)` leaves to `done` with
 * the error. Composed once per route; a request creates only the anonymous `next` callbacks (no
 * named closures: tsx's keepNames would define a name property on each, at a cost).
 */
function compose(handlers: RequestHandler[]): Chain {
  let chain: Chain = (_req, _res, done) => done();
  for (const handler of [...handlers].reverse()) {
    const rest = chain;
    chain = (req, res, done) => invoke(handler, req, res, (err?: unknown) => (err ? done(err) : rest(req, res, done)));
  }
  return chain;
}

/** `onMatch` runs first for every request the table answers (the request context, src/http/app.ts). */
export function routeTable(routes: TableRoute[], onMatch?: (req: Request, res: Response) => void): RequestHandler {
  const byLength = new Map<number, PathEntry[]>();
  const byPath = new Map<string, PathEntry>();
  for (const route of routes) {
    let entry = byPath.get(route.path);
    if (!entry) {
      entry = { path: route.path, segments: compile(route.path), methods: new Map() };
      byPath.set(route.path, entry);
      const sameLength = byLength.get(entry.segments.length) ?? [];
      sameLength.push(entry);
      byLength.set(entry.segments.length, sameLength);
    }
    const method = route.method.toUpperCase();
    if (entry.methods.has(method)) throw new Error(`route ${method} ${route.path} is declared twice`);
    entry.methods.set(method, compose(route.handlers));
  }

  return (req, res, next) => {
    const url = req.url;
    const q = url.indexOf('?');
    let pathname = q < 0 ? url : url.slice(0, q);
    if (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);
    const parts = pathname.split('/');
    const candidates = byLength.get(parts.length - 1);
    if (!candidates) return next();
    let allowed: PathEntry | undefined;
    for (const entry of candidates) {
      let params: Record<string, string> | undefined;
      try {
        params = match(entry.segments, parts);
      } catch (err) {
        onMatch?.(req, res);
        return next(err);
      }
      if (!params) continue;
      const chain = entry.methods.get(req.method) ?? (req.method === 'HEAD' ? entry.methods.get('GET') : undefined);
      if (!chain) {
        allowed ??= entry;
        continue;
      }
      req.params = params;
      res.locals.route = entry.path;
      onMatch?.(req, res);
      return chain(req, res, next);
    }
    if (!allowed) return next();
    res.locals.route = allowed.path;
    onMatch?.(req, res);
    const methods = [...allowed.methods.keys()];
    if (methods.includes('GET')) methods.push('HEAD');
    res.setHeader('Allow', methods.join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next(new HttpError(405, 'method_not_allowed', `${req.method} is not allowed on ${allowed.path}; allowed: ${methods.join(', ')}`));
  };
}
