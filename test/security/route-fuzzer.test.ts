/**
 * A route fuzzer over the OpenAPI document: for every route and every one of its inputs (path
 * params, query fields, body fields, nested ones included, and the body as a whole), requests that
 * are valid except for that one input, which gets a wrong type, an out-of-range number, a lone
 * surrogate, NUL, a huge string, an array instead of a scalar, null, a value given twice or is
 * missing. Every answer must be a 4xx (never 5xx, never 2xx), a 400 must name the broken field,
 * and afterwards the database holds the same number of rows in every table and Redis the same
 * keys. Runs as the admin, so that the role checks let every request through to validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN } from '../support/env.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

type Schema = Record<string, any>;
const MISSING = Symbol('missing');
type Value = unknown | typeof MISSING;

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query'; schema: Schema; required: boolean }[];
  body?: Schema;
}

/** Raw JSON text for values JSON.stringify cannot write as intended (a lone surrogate stays an escape in the text anyway). */
const HUGE = 'x'.repeat(200_000);
const HUGE_URL_PART = 'x'.repeat(5_000);

// ---------------------------------------------------------------------------------------------
// Valid values (so that one broken input is the only reason for a 4xx).

/** Valid values of body fields whose schema cannot say (formats checked by code), by field name. */
const BODY_SAMPLES: Record<string, unknown> = {
  url: 'https://feeds.example.com/fuzz.xml',
  username: 'fuzz.user',
  password: 'fuzz-password-1',
  currentPassword: TEST_ADMIN.password,
  newPassword: 'a-new-password-1',
  content: 'hello',
  text: 'a pooled text',
  name: 'fuzz',
  keyword: 'fuzz',
  title: 'a title',
  // A hand-added job's payload (checked by code against the queue's schema) and a queue filter.
  data: { task: 'fuzz-task' },
  queue: 'maintenance',
};

function validValue(schema: Schema, name?: string): unknown {
  if (name && name in BODY_SAMPLES && (schema.type === 'string' || schema.anyOf || schema.type === undefined)) return BODY_SAMPLES[name];
  if (schema.anyOf) return validValue(schema.anyOf[0], name);
  if (schema.enum) return schema.enum[schema.enum.includes('user') ? schema.enum.indexOf('user') : 0];
  switch (schema.type) {
    case 'string':
      if (schema['x-integer-minimum'] !== undefined) return String(Math.max(1, schema['x-integer-minimum']));
      if (schema.pattern === '^\\d{1,10}$') return '1';
      return 'fuzz'.padEnd(schema.minLength ?? 1, 'z');
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return true;
    case 'array':
      return [validValue(schema.items)];
    case 'object': {
      const props = Object.entries<Schema>(schema.properties ?? {});
      const required: string[] = schema.required ?? [];
      // All required fields; with none required (PATCH bodies), the first one.
      const chosen = required.length ? props.filter(([k]) => required.includes(k)) : props.slice(0, 1);
      return Object.fromEntries(chosen.map(([k, s]) => [k, validValue(s, k)]));
    }
    default:
      return 'fuzz';
  }
}

// ---------------------------------------------------------------------------------------------
// Broken values of one input.

function types(schema: Schema): Set<string> {
  if (schema.anyOf) return new Set(schema.anyOf.flatMap((s: Schema) => [...types(s)]));
  return new Set([schema.type ?? 'any']);
}

/** Broken values of a JSON body field (each one invalid for the schema). */
function bodyMutations(schema: Schema, required: boolean): { label: string; value: Value }[] {
  const accepted = types(schema);
  const out: { label: string; value: Value }[] = [];
  if (required) out.push({ label: 'missing', value: MISSING });
  if (!accepted.has('null')) out.push({ label: 'null', value: null });
  if (!accepted.has('string')) out.push({ label: 'wrong type: string', value: '12' });
  if (!accepted.has('integer') && !accepted.has('number')) out.push({ label: 'wrong type: number', value: 12345 });
  if (!accepted.has('boolean')) out.push({ label: 'wrong type: boolean', value: true });
  if (!accepted.has('object')) out.push({ label: 'wrong type: object', value: { a: 1 } });
  if (!accepted.has('array')) out.push({ label: 'array for a scalar', value: [validValue(schema)] });
  const numeric = (schema.anyOf ?? [schema]).find((s: Schema) => s.type === 'integer' || s.type === 'number');
  if (numeric) {
    if (numeric.minimum !== undefined) out.push({ label: 'below the minimum', value: numeric.minimum - 1 });
    if (numeric.maximum !== undefined) out.push({ label: 'above the maximum', value: numeric.maximum + 1 });
    out.push({ label: 'huge number', value: 1e308 }, { label: 'huge negative number', value: -1e308 });
    if (numeric.type === 'integer') out.push({ label: 'fraction', value: 1.5 }, { label: 'beyond 2^53', value: 2 ** 53 + 2 });
  }
  const stringSchema = (schema.anyOf ?? [schema]).find((s: Schema) => s.type === 'string');
  if (stringSchema) {
    out.push(
      { label: 'lone surrogate', value: 'fuzz\ud800' },
      { label: 'lone low surrogate', value: '\udfffzz' },
      { label: 'NUL', value: 'fu\u0000zz' },
      { label: 'huge string', value: HUGE },
      { label: 'empty string', value: '' },
    );
    if (stringSchema.pattern) out.push({ label: 'not matching the pattern', value: '1e3 0x10' });
    if (schema.enum || stringSchema.enum) out.push({ label: 'not in the enum', value: 'not-one-of-them' });
  }
  if (accepted.has('array')) {
    out.push({ label: 'empty array', value: [] }, { label: 'array of wrong items', value: [12345] });
    if (schema.maxItems !== undefined && schema.maxItems <= 20_000)
      out.push({ label: 'too many items', value: Array.from({ length: schema.maxItems + 1 }, () => validValue(schema.items)) });
  }
  // A string of decimal digits where a union accepts one: out of range or not decimal.
  if (stringSchema?.pattern === '^\\d{1,16}$')
    out.push({ label: 'digits out of range', value: '99999999999' }, { label: 'zero as digits', value: '0' }, { label: 'hex', value: '0x10' });
  return out;
}

/** Broken values of a path segment or query field (text in a URL, already percent-encoded). */
function urlMutations(schema: Schema): { label: string; raw: string }[] {
  const out = [
    { label: 'NUL', raw: 'a%00b' },
    { label: 'invalid UTF-8 (a lone surrogate)', raw: '%ED%A0%80' },
    { label: 'huge', raw: HUGE_URL_PART },
  ];
  // Free text (a search string) has nothing to mismatch; any other field has a shape to break.
  const freeText = schema.type === 'string' && !schema.pattern && !schema.enum && !schema.format && schema['x-integer-minimum'] === undefined;
  if (!freeText) out.push({ label: 'not matching anything', raw: 'not%20valid%20%7B%7D' });
  if (schema['x-integer-minimum'] !== undefined || schema.pattern?.includes('\\d')) {
    out.push(
      { label: 'exponent', raw: '1e3' },
      { label: 'hex', raw: '0x10' },
      { label: 'negative', raw: '-1' },
      { label: 'fraction', raw: '1.5' },
      { label: 'beyond int32', raw: '99999999999' },
      { label: 'beyond 2^53', raw: '9'.repeat(30) },
      { label: 'padded', raw: '%201' },
    );
    const min = schema['x-integer-minimum'];
    if (min !== undefined && min > 0) out.push({ label: 'below the minimum', raw: String(min - 1) });
    const max = schema['x-integer-maximum'];
    if (max !== undefined) out.push({ label: 'above the maximum', raw: String(max + 1) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('route fuzzer over the OpenAPI document', () => {
  let t: TestPlatform;
  /** Valid path param values of existing resources, by route path and param name. */
  const pathSamples: Record<string, string> = {};
  let sent = 0;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    const { api } = t;
    // Something to point at: a feed, an IP, a user, an API key, pool rows, a session, a failed job.
    const feed = await api.post('/api/feeds', { url: 'https://feeds.example.com/seed.xml' });
    const ip = await api.post('/api/ips', { name: 'seed', keyword: 'seed' });
    const user = await api.post('/api/users', { username: 'fuzz-target', password: 'fuzz-target-pw' });
    const key = await api.post('/api/api-keys', { name: 'seed', userId: user.body.id });
    await api.post('/api/pools/titles/1/items', { items: [{ text: 'seed', batchId: 1 }] });
    await api.post('/api/sessions/fuzz-session/messages', { role: 'user', content: 'seed' });
    const job = await t.platform.ctx.queues.add('maintenance', 'seed', { task: 'seed' });
    for (const r of [feed, ip, user, key]) expect(r.status).toBe(201);
    Object.assign(pathSamples, {
      '/api/users/{id}': String(user.body.id),
      '/api/api-keys/{id}': String(key.body.id),
      '/api/feeds/{id}': String(feed.body.id),
      '/api/ips/{id}': String(ip.body.id),
      name: 'maintenance',
      '/api/queues/{name}/jobs/{id}': job.id!,
      task_id: job.id!,
      type: 'titles',
      groupId: '1',
      sessionId: 'fuzz-session',
      messageId: 'no-such-message',
    });
  });
  afterAll(() => t?.stop());

  async function rowCounts(): Promise<Record<string, number>> {
    const { pool } = t.platform.ctx.db;
    const { rows } = await pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of rows) counts[table_name] = Number((await pool.query(`SELECT count(*) AS n FROM "${table_name}"`)).rows[0].n);
    return counts;
  }

  async function redisKeys(): Promise<string[]> {
    return (await t.platform.ctx.redis.keys('*')).sort();
  }

  it('answers every broken input of every route with a 4xx naming it, and changes nothing', async () => {
    const doc = (await t.api.get('/api/openapi.json')).body;
    const operations: Operation[] = [];
    for (const [path, ops] of Object.entries<Record<string, Schema>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        operations.push({ method: method.toUpperCase(), path, params: op.parameters, body: op.requestBody?.content['application/json'].schema });
      }
    }
    // Warm-up: whatever a valid request of this admin creates lazily exists before the counts are taken.
    await t.api.get('/api/feeds');
    await t.api.get('/api/sessions/fuzz-session/messages');

    const rowsBefore = await rowCounts();
    const keysBefore = await redisKeys();
    const failures: string[] = [];
    const untested: string[] = [];
    const statuses = new Map<number, number>();

    /** An existing resource's id: by the route path up to the param (`/api/feeds/{id}`), else by the param's name. */
    const sampleOf = (op: Operation, name: string, schema: Schema) => {
      const upTo = op.path.slice(0, op.path.indexOf(`{${name}}`) + name.length + 2);
      return pathSamples[upTo] ?? pathSamples[name] ?? encodeURIComponent(String(validValue(schema)));
    };

    async function send(
      op: Operation,
      what: string,
      path: Record<string, string>,
      query: [string, string][],
      body: string | undefined,
      brokenField: string | undefined,
    ) {
      const url = op.path.replace(/\{(\w+)\}/g, (_, n: string) => path[n]!) + (query.length ? `?${query.map(([k, v]) => `${k}=${v}`).join('&')}` : '');
      const res = await t.api.request(op.method, url, body);
      sent++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `${op.method} ${op.path} — ${what}`;
      if (res.status < 400 || res.status >= 500) {
        failures.push(`${where}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        return;
      }
      // A 400 names the broken field (or a field inside it, or the body as a whole).
      const field: string | undefined = res.body?.error?.field;
      if (
        res.status === 400 &&
        brokenField !== undefined &&
        field !== undefined &&
        !(field === brokenField || field.startsWith(`${brokenField}.`) || brokenField.startsWith(`${field}.`) || field === '(body)')
      ) {
        failures.push(`${where}: 400 names "${field}", not "${brokenField}"`);
      }
    }

    for (const op of operations) {
      const pathParams = op.params.filter((p) => p.in === 'path');
      const queryParams = op.params.filter((p) => p.in === 'query');
      if (!pathParams.length && !queryParams.length && !op.body) {
        untested.push(`${op.method} ${op.path}`);
        continue;
      }
      const validPath = Object.fromEntries(pathParams.map((p) => [p.name, sampleOf(op, p.name, p.schema)]));
      const validBody = op.body ? validValue(op.body) : undefined;
      const validBodyText = validBody === undefined ? undefined : JSON.stringify(validBody);

      for (const p of pathParams) {
        for (const m of urlMutations(p.schema)) {
          await send(op, `path ${p.name}: ${m.label}`, { ...validPath, [p.name]: m.raw }, [], validBodyText, p.name);
        }
      }
      for (const q of queryParams) {
        const valid = encodeURIComponent(String(validValue(q.schema)));
        for (const m of urlMutations(q.schema)) await send(op, `query ${q.name}: ${m.label}`, validPath, [[q.name, m.raw]], validBodyText, q.name);
        await send(
          op,
          `query ${q.name}: given twice`,
          validPath,
          [
            [q.name, valid],
            [q.name, valid],
          ],
          validBodyText,
          q.name,
        );
        if (q.schema.enum) await send(op, `query ${q.name}: not in the enum`, validPath, [[q.name, 'nope']], validBodyText, q.name);
      }
      if (op.body) {
        const body = validBody as Record<string, unknown>;
        // The body as a whole.
        for (const [label, raw] of [
          ['not JSON', '{"a": '],
          ['an array', '[]'],
          ['a string', '"x"'],
          ['null', 'null'],
          ['a number', '123'],
          ['deeply nested', `${'['.repeat(50_000)}${']'.repeat(50_000)}`],
          ['an unknown field', JSON.stringify({ ...body, unexpectedField: 1 })],
          ['a lone surrogate in a key', `{"\\ud800":1}`],
        ] as const) {
          await send(op, `body: ${label}`, validPath, [], raw, undefined);
        }
        if ((op.body.required ?? []).length || !Object.keys(body).length) await send(op, 'body: {}', validPath, [], '{}', undefined);
        // Each field, nested ones included (one level into arrays of objects).
        const fields: { path: string[]; schema: Schema; required: boolean }[] = [];
        for (const [k, s] of Object.entries<Schema>(op.body.properties ?? {})) {
          fields.push({ path: [k], schema: s, required: (op.body.required ?? []).includes(k) });
          if (s.type === 'array' && s.items?.type === 'object') {
            for (const [ik, is] of Object.entries<Schema>(s.items.properties ?? {}))
              fields.push({ path: [k, '0', ik], schema: is, required: (s.items.required ?? []).includes(ik) });
          }
        }
        for (const f of fields) {
          for (const m of bodyMutations(f.schema, f.required)) {
            const broken = structuredClone(body) as Record<string, any>;
            let target: Record<string, any> = broken;
            for (const part of f.path.slice(0, -1)) target = target[part] ??= Array.isArray(target) ? {} : part === '0' ? {} : [];
            const last = f.path.at(-1)!;
            if (m.value === MISSING) delete target[last];
            else target[last] = m.value;
            await send(op, `body ${f.path.join('.')}: ${m.label}`, validPath, [], JSON.stringify(broken), f.path.join('.'));
          }
        }
      }
    }

    expect(failures, failures.join('\n')).toEqual([]);
    expect(await rowCounts()).toEqual(rowsBefore);
    expect(await redisKeys()).toEqual(keysBefore);
    // Routes that take no input at all have nothing to break: exactly these (a route whose inputs
    // dropped out of the OpenAPI document would show up here).
    expect([...untested].sort()).toEqual(
      [
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'GET /api/openapi.json',
        'POST /api/auth/logout',
        'GET /api/users',
        'GET /api/api-keys',
        'GET /api/queues',
        'GET /api/feeds',
        'GET /api/pools',
        'POST /api/messages/refused/requeue',
        'GET /api/cluster',
        'GET /api/cluster/config',
      ].sort(),
    );
    const byStatus = Object.fromEntries([...statuses].sort(([a], [b]) => a - b));
    console.log(
      `route fuzzer: ${sent} requests over ${operations.length} operations, answers by status ${JSON.stringify(byStatus)} (${untested.length} operations take no input: ${untested.join(', ')})`,
    );
    // The admin passed every role check: the answers are the inputs' own.
    expect(statuses.has(401) || statuses.has(403)).toBe(false);
    expect(sent).toBeGreaterThan(800);
  });
});
