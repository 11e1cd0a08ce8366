/**
 * One way to declare an HTTP route: its method and path, who may call it, the zod schemas of its
 * params, query and body, and a handler that takes the validated input and returns a Reply. No
 * framework: the dispatcher (dispatcher.ts) authenticates, reads the body, validates
 * (route-input.ts: a 400 naming the field before the handler runs, so nothing is written or
 * enqueued) and writes the reply; the same declaration feeds the OpenAPI document (openapi.ts).
 */
import { z } from 'zod';
import type { VerifiedToken } from '../auth/principal.js';
import type { Role } from '../auth/roles.js';

/**
 * The caller of an authenticated route: user, role, session. On `revocation: 'in-handler'` routes
 * (single Redis) it carries the credential check the handler's own script makes (`revocation`).
 */
export type AuthInfo = VerifiedToken;

/** Who may call a route: anybody (login, health), any signed-in user, or admins only. */
export type Access = 'public' | Role;

/** What a handler gets: its validated params, query and body, the caller, and the client's address. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Undefined on public routes (and when a static credential was accepted, see `staticCredential`). */
  auth: AuthInfo | undefined;
  /** The client's address: the peer's, or behind trusted proxies the right-most untrusted X-Forwarded-For entry (client-address.ts). */
  readonly ip: string | undefined;
}

/** What a handler returns: a status and a JSON body (or no body, as for 204). */
export interface Reply {
  status?: number;
  body?: unknown;
  /** The body as JSON text already (a cache entry as stored), sent as it is instead of `body`. */
  json?: string;
  /** A body that is not JSON (Prometheus text), with its Content-Type in `headers`. */
  text?: string;
  headers?: Record<string, string>;
}

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** Literal segments and `:params` (`/api/feeds/:id`). */
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
   * src/revocation/revocation.ts), saving a round trip on hot routes. Default: the check is made before the handler.
   */
  revocation?: 'in-handler';
  /**
   * A credential accepted besides users' (the Prometheus scrape token of /metrics): given the
   * Authorization header, true lets the request through without a user (`auth` undefined).
   */
  staticCredential?: (authorization: string | undefined) => boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Documented responses: status → description and optional schema. */
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Reply> | Reply;
}

export type AnyRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

export function defineRoute<P extends z.ZodType = z.ZodObject<{}>, Q extends z.ZodType = z.ZodObject<{}>, B extends z.ZodType = z.ZodUnknown>(
  spec: RouteSpec<P, Q, B>,
): AnyRoute {
  return spec as unknown as AnyRoute;
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
