/**
 * The dispatch of the declared routes, in front of express: the node:http request listener asks
 * the table first; a request it does not serve goes on to the express app (health, metrics, Bull
 * Board, 404).
 *
 * Express matches a request against every layer in turn and, for nested routers, re-parses the
 * URL, trims and restores the path and merges params at every level; even a bare express app with
 * one route costs about 70 µs of CPU a request on the benchmark machine beyond the express
 * request/response objects themselves (bench:pools). Here the path is split once, the routes of
 * that many segments are compared segment by segment, and the matched route's chain runs directly
 * on express's request and response (the `enter` hook: express-objects.ts), so handlers and
 * middleware (body parser, res.status/json, req.ip with trust proxy) work as under express. Paths
 * are literal segments and `:params` only (what the routes declare; anything else is refused when
 * the table is built).
 *
 * Matching follows express's defaults: literal segments ignore case, one trailing slash is
 * allowed, params are percent-decoded (a malformed escape is a 400), HEAD is answered by the GET
 * route. A path that is declared but not for the request's method answers 405 with an Allow
 * header (OPTIONS: 204 with Allow).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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

type Chain = (req: Request, res: Response) => void;

export interface TableHooks {
  /** Runs first for every request the table answers: makes it an express request (expressRequest) and begins its context. */
  enter(req: Request, res: Response): void;
  /**
   * Where a request goes when its chain passes it on: with the error of a step (`next(err)`, a
   * throw, a rejection; a 405; a malformed param), or with none when the last step called `next()`.
   */
  leave(err: unknown, req: Request, res: Response): void;
}

/** Serves a request when it is one of the table's (true), else leaves it alone (false). */
export type DeclaredRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

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
 * The handlers as one chain, express style: `next()` goes on, `next(err)` leaves with the error.
 * Composed once per route; a request creates only the anonymous `next` callbacks (no named
 * closures: tsx's keepNames would define a name property on each, at a cost).
 */
function compose(handlers: RequestHandler[], leave: TableHooks['leave']): Chain {
  let chain: Chain = (req, res) => leave(undefined, req, res);
  for (const handler of [...handlers].reverse()) {
    const rest = chain;
    chain = (req, res) => invoke(handler, req, res, (err?: unknown) => (err ? leave(err, req, res) : rest(req, res)));
  }
  return chain;
}

export function routeTable(routes: TableRoute[], hooks: TableHooks): DeclaredRoutes {
  const { enter, leave } = hooks;
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
    entry.methods.set(method, compose(route.handlers, leave));
  }

  return (incoming, response) => {
    const req = incoming as Request;
    const res = response as Response;
    const url = req.url;
    const q = url.indexOf('?');
    let pathname = q < 0 ? url : url.slice(0, q);
    if (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);
    const parts = pathname.split('/');
    const candidates = byLength.get(parts.length - 1);
    if (!candidates) return false;
    let allowed: PathEntry | undefined;
    for (const entry of candidates) {
      let params: Record<string, string> | undefined;
      try {
        params = match(entry.segments, parts);
      } catch (err) {
        enter(req, res);
        leave(err, req, res);
        return true;
      }
      if (!params) continue;
      const chain = entry.methods.get(req.method) ?? (req.method === 'HEAD' ? entry.methods.get('GET') : undefined);
      if (!chain) {
        allowed ??= entry;
        continue;
      }
      enter(req, res);
      req.params = params;
      res.locals.route = entry.path;
      chain(req, res);
      return true;
    }
    if (!allowed) return false;
    enter(req, res);
    res.locals.route = allowed.path;
    const methods = [...allowed.methods.keys()];
    if (methods.includes('GET')) methods.push('HEAD');
    res.setHeader('Allow', methods.join(', '));
    if (req.method === 'OPTIONS') res.status(204).end();
    else leave(new HttpError(405, 'method_not_allowed', `${req.method} is not allowed on ${allowed.path}; allowed: ${methods.join(', ')}`), req, res);
    return true;
  };
}
