/**
 * The OpenAPI 3.1 document of the REST API, generated from the same route declarations (and
 * zod schemas) that validate requests; served at /api/openapi.json.
 */
import { z } from 'zod';
import type { AnyRoute } from './route.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: 'string', description: 'The offending input field, for bad input.' },
        requestId: { type: 'string', description: 'On 500: the request id (X-Request-Id) that finds the error in the log.' },
      },
    },
  },
};

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input');
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' || (required.has(name) && prop.default === undefined),
    schema: prop,
  }));
}

export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    const responses: Record<string, JsonSchema> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      const ok = Number(status) < 400;
      responses[status] = {
        description: resp.description,
        ...(resp.schema || !ok ? { content: { 'application/json': { schema: resp.schema ? jsonSchema(resp.schema, 'output') : errorSchema } } } : {}),
      };
    }
    if (r.params || r.query || r.body) {
      responses['400'] ??= {
        description: 'bad input (wrong type, out of range, a field given twice, text with NUL or a lone surrogate); `error.field` names the field',
        content: { 'application/json': { schema: errorSchema } },
      };
    }
    if (r.access !== 'public') {
      responses['401'] ??= {
        description: 'missing, invalid, expired, logged-out or ended token (password, role or disabled change), or a revoked API key',
        content: { 'application/json': { schema: errorSchema } },
      };
      responses['503'] ??= {
        description: 'the token cannot be checked (Redis down, AUTH_FAIL_OPEN=false)',
        content: { 'application/json': { schema: errorSchema } },
      };
    }
    if (r.access === 'admin')
      responses['403'] ??= { description: 'forbidden: the route is for admins', content: { 'application/json': { schema: errorSchema } } };
    responses['500'] ??= { description: 'internal error; `error.requestId` finds it in the log', content: { 'application/json': { schema: errorSchema } } };
    (paths[path] ??= {})[r.method] = {
      tags: [r.tag],
      summary: r.summary,
      'x-access': r.access,
      ...(r.access === 'public' ? { security: [] } : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { ...info, description: 'REST API of the worker platform. Errors are {"error": {"code", "message", "field"?}}.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A token from POST /api/auth/login, or an API key (wpk_...). `x-access` on each operation: public, user (any role) or admin.',
        },
      },
      schemas: { Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
