/**
 * One way to declare an HTTP route: its method and path, the zod schemas of its params, query
 * and body, and a thin handler. The same declaration validates requests (a 400 naming the
 * field before the handler runs, so nothing is written or enqueued) and feeds the OpenAPI
 * document (src/http/openapi.ts).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { VerifiedToken } from '../auth/auth-service.js';
import { roleAllows, type Role } from '../auth/roles.js';
import { HttpError } from '../errors.js';
import { findTextProblem, malformedQueryField, repeatedQueryField, TEXT_PROBLEM_MESSAGE, textProblem } from './input-checks.js';
import { routeTable, type DeclaredRoutes, type TableHooks } from './route-table.js';

/**
 * The caller of an authenticated route: user, role, session. On `revocation: 'in-handler'` routes
 * (single Redis) it carries the credential check the handler's own script makes (`revocation`).
 */
export type AuthInfo = VerifiedToken;

/** Who may call a route: anybody (login, health), any signed-in user, or admins only. */
export type Access = 'public' | Role;

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
  /**
   * Required: 'public' needs no credential; 'user' a valid, current token or API key of any role;
   * 'admin' one of the admin role (403 otherwise).
   */
  access: Access;
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

/** Text anywhere in a request part that could not be stored as sent (input-checks.ts): 400 naming the field. */
function refuseUnstorableText(value: unknown, where: 'params' | 'query' | 'body'): void {
  const found = findTextProblem(value);
  if (!found) return;
  const field = found.path || (where === 'body' ? '(body)' : where);
  throw new HttpError(400, 'invalid_text', `${field}: ${TEXT_PROBLEM_MESSAGE[found.problem]}`, field);
}

/** The same for path params, which are flat strings (the hot routes' case: no walk, no allocation). */
function refuseUnstorableParams(params: Record<string, unknown>): void {
  for (const name in params) {
    const value = params[name];
    const problem = typeof value === 'string' ? textProblem(value) : undefined;
    if (problem) throw new HttpError(400, 'invalid_text', `${name}: ${TEXT_PROBLEM_MESSAGE[problem]}`, name);
  }
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
      if (route.access !== 'public') handlers.push(route.revocation === 'in-handler' ? steps.requireAuthDeferred : steps.requireAuth);
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
      const auth = res.locals.auth as AuthInfo | undefined;
      if (route.access === 'admin' && !(auth && roleAllows(auth.role, 'admin'))) {
        throw new HttpError(403, 'forbidden', `${route.method.toUpperCase()} ${route.path} is for admins`);
      }
      let params: unknown = req.params;
      if (route.params) {
        refuseUnstorableParams(req.params);
        params = parseOr400(route.params, req.params, 'params');
      }
      let query: unknown = {};
      if (route.query) {
        const raw = req.query as Record<string, unknown>;
        const repeated = repeatedQueryField(raw);
        if (repeated) throw new HttpError(400, 'invalid_request', `${repeated}: given more than once`, repeated);
        const malformed = malformedQueryField(req.url);
        if (malformed) throw new HttpError(400, 'invalid_text', `${malformed}: not valid percent-encoded UTF-8`, malformed);
        refuseUnstorableText(raw, 'query');
        query = parseOr400(route.query, raw, 'query');
      }
      let body: unknown = undefined;
      if (route.body) {
        if (req.body === undefined) throw new HttpError(400, 'invalid_request', 'a JSON body is required (Content-Type: application/json)', '(body)');
        refuseUnstorableText(req.body, 'body');
        body = parseOr400(route.body, req.body, 'body');
      }
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

/** The largest value of a PostgreSQL integer column (the ids of users, feeds, IPs, API keys). */
export const INT32_MAX = 2_147_483_647;

/**
 * An integer written in decimal digits only (no sign, exponent, hex, spaces or fraction: `1e3`,
 * `0x10`, ` 7` are refused, not read as 1000, 16, 7) within [min, max]: path segments and query
 * fields.
 */
export function decimalInt(min: number, max: number) {
  const message = `must be a decimal integer from ${min} to ${max}`;
  return z
    .string({ message })
    .regex(/^\d{1,16}$/, message)
    .meta({ description: message, 'x-integer-minimum': min, 'x-integer-maximum': max })
    .transform(Number)
    .refine((n) => n >= min && n <= max, message);
}

/** A positive id of an integer column in a path segment. */
export const idParam = decimalInt(1, INT32_MAX);

/** Query booleans: "true"/"false"/"1"/"0". */
export const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
