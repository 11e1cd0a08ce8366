/**
 * One way to declare an HTTP route: its method and path, the zod schemas of its params, query
 * and body, and a thin handler. The same declaration validates requests (a 400 naming the
 * field before the handler runs, so nothing is written or enqueued) and feeds the OpenAPI
 * document (src/http/openapi.ts).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Revocation } from '../auth/revocation.js';
import { HttpError } from '../errors.js';
import { routeTable, type DeclaredRoutes, type TableHooks } from './route-table.js';

export interface AuthInfo {
  userId: number;
  username: string;
  sessionId: string;
  /** Token expiry, seconds since the epoch. */
  exp: number;
  /** False when the blacklist could not be checked and AUTH_FAIL_OPEN let the token through, or when it is left to the handler. */
  blacklistChecked: boolean;
  /** On `revocation: 'in-handler'` routes (single Redis): the blacklist check the handler's own script makes. */
  revocation?: Revocation;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  auth: AuthInfo | undefined;
  req: Request;
  res: Response;
}

/** What a handler returns: a status and a JSON body (or no body for 204). */
export interface Reply {
  status?: number;
  body?: unknown;
  /** The body as JSON text already (a cache entry as stored), sent as it is instead of `body`. */
  json?: string;
  headers?: Record<string, string>;
}

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** Express path syntax (`/api/feeds/:id`). */
  path: string;
  summary: string;
  tag: string;
  /** Default true: a valid, unexpired, not blacklisted token is required. */
  auth?: boolean;
  /**
   * 'in-handler': the handler's one Redis script checks the logout blacklist itself (AuthInfo.revocation,
   * src/auth/revocation.ts), saving a round trip on hot routes. Default: the middleware checks it.
   */
  revocation?: 'in-handler';
  params?: P;
  query?: Q;
  body?: B;
  /** Documented responses: status → description and optional schema. */
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Reply> | Reply;
}

export type AnyRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

export function defineRoute<
  P extends z.ZodType = z.ZodObject<{}>,
  Q extends z.ZodType = z.ZodObject<{}>,
  B extends z.ZodType = z.ZodUnknown,
>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec as unknown as AnyRoute;
}

/** Parses one part of a request; the first issue becomes a 400 naming the field. */
export function parseOr400<T>(schema: z.ZodType<T>, value: unknown, where: 'params' | 'query' | 'body'): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  const field = path || (where === 'body' ? '(body)' : where);
  const message = issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message;
  throw new HttpError(400, 'invalid_request', `${field}: ${message}`, issue.code === 'unrecognized_keys' ? issue.keys[0] : field);
}

export interface RouteSteps {
  /** A valid, unexpired, not logged-out token. */
  requireAuth: RequestHandler;
  /** A valid, unexpired token; the blacklist check is left to the handler (AuthInfo.revocation). */
  requireAuthDeferred: RequestHandler;
  /** The JSON body parser, run (after the guard) on routes that declare a body only. */
  parseJson: RequestHandler;
}

/**
 * The declared routes as a route table (route-table.ts): each behind the guard it declares, its
 * JSON body parsed only when it declares one, then validated and handled.
 */
export function declaredRoutes(routes: AnyRoute[], steps: RouteSteps, hooks: TableHooks): DeclaredRoutes {
  return routeTable(
    routes.map((route) => {
      const handlers: RequestHandler[] = [];
      if (route.auth !== false) handlers.push(route.revocation === 'in-handler' ? steps.requireAuthDeferred : steps.requireAuth);
      if (route.body) handlers.push(steps.parseJson);
      handlers.push(routeHandler(route));
      return { method: route.method, path: route.path, handlers };
    }),
    hooks,
  );
}

function routeHandler(route: AnyRoute): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const params = route.params ? parseOr400(route.params, req.params, 'params') : req.params;
      const query = route.query ? parseOr400(route.query, req.query, 'query') : {};
      let body: unknown = undefined;
      if (route.body) {
        if (req.body === undefined) throw new HttpError(400, 'invalid_request', 'a JSON body is required (Content-Type: application/json)', '(body)');
        body = parseOr400(route.body, req.body, 'body');
      }
      const auth = res.locals.auth as AuthInfo | undefined;
      const reply = await route.handler({ params, query, body, auth, req, res });
      // A handler that left the blacklist check unused must not answer without it.
      if (auth?.revocation && !auth.revocation.taken) await auth.revocation.check();
      if (res.headersSent) return;
      if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
      const status = reply.status ?? 200;
      if (reply.json !== undefined) sendJson(res, status, reply.json);
      else if (reply.body === undefined) res.status(status).end();
      else sendJson(res, status, JSON.stringify(reply.body));
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Answers with a JSON text as it is. Plain node:http (Content-Length and HEAD are Node's), not
 * express's res.json/send: those re-derive the content type and charset on every call, which
 * costs more than the rest of a small reply.
 */
function sendJson(res: Response, status: number, json: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(json);
}

// Shared schema pieces for routes.

/** A positive integer id in a path segment. */
export const idParam = z.coerce.number({ message: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer');

/** Query booleans: "true"/"false"/"1"/"0". */
export const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
