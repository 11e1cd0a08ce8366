/**
 * A declared route's input, validated: the path params, the query and the JSON body each through
 * the route's schema, after the checks every request gets whatever its schema says (text that
 * could not be stored as sent, a query field given twice or not valid percent-encoded UTF-8).
 * The first problem is a 400 naming the field (InvalidInputError), before the handler runs.
 */
import { parse as parseQuery } from 'node:querystring';
import type { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import { findTextProblem, malformedQueryField, repeatedQueryField, TEXT_PROBLEM_MESSAGE, textProblem } from './input-checks.js';
import type { AnyRoute } from './route.js';

type Part = 'params' | 'query' | 'body';

/** Text anywhere in a request part that could not be stored as sent (input-checks.ts): 400 naming the field. */
function refuseUnstorableText(value: unknown, where: Part): void {
  const found = findTextProblem(value);
  if (!found) return;
  const field = found.path || (where === 'body' ? '(body)' : where);
  throw new InvalidInputError('invalid_text', `${field}: ${TEXT_PROBLEM_MESSAGE[found.problem]}`, { field });
}

/** The same for path params, which are flat strings (the hot routes' case: no walk, no allocation). */
function refuseUnstorableParams(params: Record<string, string>): void {
  for (const name in params) {
    const problem = textProblem(params[name]!);
    if (problem) throw new InvalidInputError('invalid_text', `${name}: ${TEXT_PROBLEM_MESSAGE[problem]}`, { field: name });
  }
}

/** Parses one part of a request; the first issue becomes a 400 naming the field. */
export function parseOr400<T>(schema: z.ZodType<T>, value: unknown, where: Part): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  const field = path || (where === 'body' ? '(body)' : where);
  const message = issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message;
  throw new InvalidInputError('invalid_request', `${field}: ${message}`, { field: issue.code === 'unrecognized_keys' ? issue.keys[0] : field });
}

/** The query string of a URL as node's querystring reads it (a field given twice becomes an array). */
function queryOf(url: string): Record<string, unknown> {
  const at = url.indexOf('?');
  return at < 0 ? {} : parseQuery(url.slice(at + 1));
}

export interface ValidInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * Validates the params (as matched, percent-decoded), the query of `url` and the parsed JSON
 * `body` (undefined when the request had none) against the route's schemas. A part the route does
 * not declare is not read: `{}` for the query, undefined for the body, the params as matched.
 */
export function validateInput(route: AnyRoute, params: Record<string, string>, url: string, body: unknown): ValidInput {
  let validParams: unknown = params;
  if (route.params) {
    refuseUnstorableParams(params);
    validParams = parseOr400(route.params, params, 'params');
  }
  let query: unknown = {};
  if (route.query) {
    const raw = queryOf(url);
    const repeated = repeatedQueryField(raw);
    if (repeated) throw new InvalidInputError('invalid_request', `${repeated}: given more than once`, { field: repeated });
    const malformed = malformedQueryField(url);
    if (malformed) throw new InvalidInputError('invalid_text', `${malformed}: not valid percent-encoded UTF-8`, { field: malformed });
    refuseUnstorableText(raw, 'query');
    query = parseOr400(route.query, raw, 'query');
  }
  let validBody: unknown = undefined;
  if (route.body) {
    if (body === undefined) throw new InvalidInputError('invalid_request', 'a JSON body is required (Content-Type: application/json)', { field: '(body)' });
    refuseUnstorableText(body, 'body');
    validBody = parseOr400(route.body, body, 'body');
  }
  return { params: validParams, query, body: validBody };
}
