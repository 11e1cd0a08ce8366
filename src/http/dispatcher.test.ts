/**
 * The dispatcher and the request wrapper on a real node:http server on loopback, with routes
 * declared here and a stand-in for the credential check (the real one is tested through the
 * platform in test/api and test/security).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Revocation } from '../revocation/revocation.js';
import { NotFoundError, UnauthenticatedError } from '../errors.js';
import { Metrics } from '../metrics/metrics.js';
import type { Authenticate } from './authenticate.js';
import { staticToken } from './authenticate.js';
import { clientAddress, proxyTrust } from './client-address.js';
import { dispatcher } from './dispatcher.js';
import { RequestWrapper } from './request-wrapper.js';
import { defineRoute, idParam, type AuthInfo } from './route.js';

const SCRAPE = 'a-static-scrape-token-of-32-chars-at-least';
const logLines: { level: number; msg: string; reqId?: string }[] = [];
const metrics = new Metrics();
/** Revocation checks made after a handler that left them unused. */
let lateChecks = 0;

function caller(role: 'admin' | 'user', revocation?: Revocation): AuthInfo {
  return {
    kind: 'token',
    userId: 1,
    username: role,
    role,
    sessionId: 's',
    credential: { kind: 'user', id: 1 },
    expectedState: '1',
    blacklistChecked: !revocation,
    ...(revocation ? { revocation } : {}),
  };
}

/** Bearer admin|user: at once; slow-user: after a tick; deferred: with a Revocation whose own check refuses. */
const authenticate: Authenticate = (headers, options = {}) => {
  const token = /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1];
  if (!token) throw new UnauthenticatedError('unauthenticated', 'an Authorization: Bearer <token> header is required');
  if (token === 'admin' || token === 'user') return caller(token);
  if (token === 'slow-user') return new Promise((resolve) => setImmediate(() => resolve(caller('user'))));
  if (token === 'deferred' && options.deferRevocation) {
    return caller(
      'user',
      new Revocation('bl', 'st', '1', async () => {
        lateChecks++;
        throw new UnauthenticatedError('token_revoked', 'the token was logged out');
      }),
    );
  }
  throw new UnauthenticatedError('invalid_token', 'the token is invalid');
};

const routes = [
  defineRoute({
    method: 'get',
    path: '/api/things/:id',
    tag: 't',
    summary: 's',
    access: 'user',
    responses: {},
    params: z.object({ id: idParam }),
    query: z.strictObject({ q: z.string().optional() }),
    handler: ({ params, query, auth }) => ({ body: { id: params.id, query, role: auth?.role } }),
  }),
  defineRoute({ method: 'delete', path: '/api/things/:id', tag: 't', summary: 's', access: 'admin', responses: {}, handler: () => ({ status: 204 }) }),
  defineRoute({
    method: 'post',
    path: '/api/things',
    tag: 't',
    summary: 's',
    access: 'user',
    responses: {},
    body: z.strictObject({ name: z.string().max(10) }),
    handler: ({ body }) => ({ status: 201, body, headers: { 'X-Cache': 'miss' } }),
  }),
  defineRoute({ method: 'get', path: '/api/whoami', tag: 't', summary: 's', access: 'public', responses: {}, handler: ({ ip }) => ({ body: { ip } }) }),
  defineRoute({
    method: 'get',
    path: '/api/fails/:how',
    tag: 't',
    summary: 's',
    access: 'public',
    responses: {},
    params: z.object({ how: z.string() }),
    handler: async ({ params }) => {
      if (params.how === 'not-found') throw new NotFoundError('thing_not_found', 'no such thing', { field: 'how' });
      if (params.how === 'sync') throw new TypeError('a bug');
      await Promise.resolve();
      throw new Error('a later bug');
    },
  }),
  defineRoute({ method: 'get', path: '/api/raw', tag: 't', summary: 's', access: 'public', responses: {}, handler: () => ({ json: '{"cached":true}' }) }),
  defineRoute({
    method: 'get',
    path: '/scrape',
    tag: 't',
    summary: 's',
    access: 'admin',
    staticCredential: staticToken(SCRAPE),
    responses: {},
    handler: ({ auth }) => ({ text: `scraped by ${auth?.role ?? 'the scrape token'}\n`, headers: { 'content-type': 'text/plain; version=0.0.4' } }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/hot',
    tag: 't',
    summary: 's',
    access: 'user',
    revocation: 'in-handler',
    responses: {},
    handler: () => ({ body: { served: true } }),
  }),
];

let server: http.Server;
let base: string;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  const wrapper = new RequestWrapper({ logger: pino({ level: 'info' }, sink), metrics, accessLog: false });
  const dispatch = dispatcher(routes, { authenticate, bodyLimit: 1024, clientAddress: clientAddress(proxyTrust(0, ['127.0.0.1', '10.0.0.0/8'])) });
  server = http.createServer((req, res) => {
    const ex = wrapper.begin(req, res);
    if (!dispatch(ex)) ex.fail(new NotFoundError('not_found', `no route for ${req.method} ${ex.pathname}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function call(method: string, path: string, options: { token?: string; body?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : undefined,
  };
}

describe('dispatcher', () => {
  it('serves a route with its validated params and query, and the caller', async () => {
    const r = await call('GET', '/API/Things/42/?q=x', { token: 'slow-user' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: 42, query: { q: 'x' }, role: 'user' });
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('refuses a missing or invalid credential (401), another role on an admin route (403)', async () => {
    expect((await call('GET', '/api/things/1')).body.error.code).toBe('unauthenticated');
    expect((await call('GET', '/api/things/1', { token: 'forged' })).status).toBe(401);
    const forbidden = await call('DELETE', '/api/things/1', { token: 'user' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('forbidden');
    expect((await call('DELETE', '/api/things/1', { token: 'admin' })).status).toBe(204);
  });

  it('takes a static credential on its route only, in place of a user', async () => {
    expect((await call('GET', '/scrape', { token: SCRAPE })).text).toBe('scraped by the scrape token\n');
    expect((await call('GET', '/scrape', { token: 'admin' })).text).toBe('scraped by admin\n');
    expect((await call('GET', '/scrape', { token: 'user' })).status).toBe(403);
    expect((await call('GET', '/scrape', { token: 'not-the-scrape-token' })).status).toBe(401);
    expect((await call('GET', '/api/things/1', { token: SCRAPE })).status).toBe(401);
  });

  it('makes the credential check a deferring handler left unused before answering', async () => {
    const before = lateChecks;
    const r = await call('POST', '/api/hot', { token: 'deferred' });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('token_revoked');
    expect(lateChecks).toBe(before + 1);
  });

  it('answers HEAD with the GET route (no body, the same length), 405 with Allow, OPTIONS 204 with Allow', async () => {
    const get = await call('GET', '/api/things/7', { token: 'user' });
    const head = await call('HEAD', '/api/things/7', { token: 'user' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
    const put = await call('PUT', '/api/things/7', { token: 'user' });
    expect(put.status).toBe(405);
    expect(put.body.error.code).toBe('method_not_allowed');
    expect(put.headers.get('allow')).toBe('GET, DELETE, HEAD');
    const options = await call('OPTIONS', '/api/things');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST');
  });

  it('answers 400 naming the field for a bad param, query or body, before the handler', async () => {
    expect((await call('GET', '/api/things/%E0%A4%A', { token: 'user' })).body.error).toMatchObject({ code: 'invalid_request', field: 'id' });
    expect((await call('GET', '/api/things/0', { token: 'user' })).body.error.field).toBe('id');
    expect((await call('GET', '/api/things/1?q=a&q=b', { token: 'user' })).body.error.field).toBe('q');
    expect((await call('GET', '/api/things/1?nope=1', { token: 'user' })).body.error.field).toBe('nope');
    expect((await call('POST', '/api/things', { token: 'user', body: '{"name":"much too long"}' })).body.error.field).toBe('name');
    expect((await call('POST', '/api/things', { token: 'user', body: '{"name":"a\\u0000"}' })).body.error).toMatchObject({
      code: 'invalid_text',
      field: 'name',
    });
  });

  it('reads a JSON body only after the credential check', async () => {
    const r = await call('POST', '/api/things', { body: '{"name": ' });
    expect(r.status).toBe(401);
  });

  it('reads JSON bodies as the API takes them, and refuses the rest with the right status', async () => {
    const ok = await call('POST', '/api/things', { token: 'user', body: '{"name":"x"}' });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ name: 'x' });
    expect(ok.headers.get('x-cache')).toBe('miss');
    expect(
      (await call('POST', '/api/things', { token: 'user', body: '{"name":"x"}', headers: { 'content-type': 'application/vnd.thing+json; charset=UTF-8' } }))
        .status,
    ).toBe(201);
    const cases: [string, { body?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> }, number, string][] = [
      ['no body', {}, 400, 'invalid_request'],
      ['not JSON', { body: '{"name": ' }, 400, 'malformed_json'],
      ['a string at the top', { body: '"x"' }, 400, 'malformed_json'],
      ['nested 500 deep', { body: `${'['.repeat(500)}${']'.repeat(500)}` }, 400, 'malformed_json'],
      ['text/plain', { body: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }, 400, 'invalid_request'],
      ['gzip', { body: new Uint8Array(gzipSync('{"name":"x"}')), headers: { 'content-encoding': 'gzip' } }, 415, 'unsupported_encoding'],
      ['latin-1', { body: '{"name":"x"}', headers: { 'content-type': 'application/json; charset=latin1' } }, 415, 'unsupported_encoding'],
      ['over the limit', { body: JSON.stringify({ name: 'x'.repeat(2000) }) }, 413, 'body_too_large'],
    ];
    for (const [label, options, status, code] of cases) {
      const r = await call('POST', '/api/things', { token: 'user', ...options });
      expect(r.status, label).toBe(status);
      expect(r.body.error.code, label).toBe(code);
      expect(r.body.error.field, label).toBe('(body)');
    }
  });

  it('refuses a chunked body over the limit as it arrives, and keeps the connection usable', async () => {
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (chunks: string[]) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/api/things',
            agent,
            headers: { authorization: 'Bearer user', 'content-type': 'application/json' },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        for (const c of chunks) req.write(c);
        req.end();
      });
    const big = await send(['{"name":"', 'x'.repeat(800), 'x'.repeat(800), '"}']);
    expect(big.status).toBe(413);
    expect((await send(['{"name":', '"ok"}'])).status).toBe(201);
    agent.destroy();
  });

  it('maps errors: outcomes to their status, anything else to a 500 with the request id, logged once', async () => {
    expect((await call('GET', '/api/fails/not-found')).body.error).toEqual({ code: 'thing_not_found', message: 'no such thing', field: 'how' });
    for (const how of ['sync', 'later']) {
      const id = `find-me-${how}`;
      const r = await call('GET', `/api/fails/${how}`, { headers: { 'x-request-id': id } });
      expect(r.status).toBe(500);
      expect(r.body.error).toEqual({ code: 'internal_error', message: `internal error; request id ${id}`, requestId: id });
      expect(logLines.filter((l) => l.reqId === id).map((l) => [l.level, l.msg])).toEqual([[50, 'unhandled error']]);
    }
  });

  it('gives every answer its request id, the security headers and no caching', async () => {
    const answers = [
      await call('GET', '/api/things/1', { token: 'user' }),
      await call('GET', '/api/fails/sync'),
      await call('GET', '/api/nothing'),
      await call('PUT', '/api/things/1'),
      await call('GET', '/api/raw'),
      await call('GET', '/scrape', { token: SCRAPE }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 500, 404, 405, 200, 200]);
    for (const a of answers) {
      expect(a.headers.get('x-request-id')).toMatch(/^[\w.-]{1,128}$/);
      expect(a.headers.get('x-content-type-options')).toBe('nosniff');
      expect(a.headers.get('x-frame-options')).toBe('DENY');
      expect(a.headers.get('referrer-policy')).toBe('no-referrer');
      expect(a.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(a.headers.get('cache-control')).toBe('no-store');
    }
    expect(new Set(answers.map((a) => a.headers.get('x-request-id'))).size).toBe(answers.length);
    expect(answers[4]!.text).toBe('{"cached":true}');
    expect(answers[5]!.headers.get('content-type')).toBe('text/plain; version=0.0.4');
    expect((await call('GET', '/api/raw', { headers: { 'x-request-id': 'caller.id-1' } })).headers.get('x-request-id')).toBe('caller.id-1');
    expect((await call('GET', '/api/raw', { headers: { 'x-request-id': 'not <sane>' } })).headers.get('x-request-id')).not.toBe('not <sane>');
  });

  it('counts requests by declared route, and unmatched ones as such', async () => {
    await call('DELETE', '/api/things/5', { token: 'admin' });
    await call('GET', '/api/not/declared');
    const text = (await metrics.render()).body;
    expect(text).toMatch(/wp_http_requests_total\{method="DELETE",route="\/api\/things\/:id",status="204"\} \d+/);
    expect(text).toMatch(/wp_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(text).toMatch(/wp_http_requests_total\{method="PUT",route="\/api\/things\/:id",status="405"\} \d+/);
  });

  it("gives handlers the client's address: the right-most X-Forwarded-For entry that is not a trusted proxy", async () => {
    expect((await call('GET', '/api/whoami', { headers: { 'x-forwarded-for': ' , 203.0.113.9, 10.0.0.1' } })).body).toEqual({ ip: '203.0.113.9' });
    expect((await call('GET', '/api/whoami')).body).toEqual({ ip: '127.0.0.1' });
  });
});
