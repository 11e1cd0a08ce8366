/**
 * The HTTP core of the api role, through the platform: every answer (the declared routes, the
 * platform's own, Bull Board's express pages, a 404) gets the request id and the security
 * headers; JSON answers a CSP and no caching; compressed or deeply nested bodies are refused with
 * 4xx and the API keeps answering; HEAD and OPTIONS on real routes.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('HTTP core of the api role', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
  });
  afterAll(() => t?.stop());

  it('gives every answer its request id and the security headers, Bull Board included', async () => {
    const anon = t.api.withToken(undefined);
    const answers = {
      api: await t.api.get('/api/queues'),
      health: await anon.get('/healthz'),
      notFound: await anon.get('/api/no-such-route'),
      boardLogin: await anon.get('/admin/login'),
      boardRedirect: await anon.get('/admin/queues', { accept: 'text/html' }),
      boardApi: await anon.get('/admin/queues/api/queues'),
      boardMissing: await t.api.get('/admin/nothing-here'),
    };
    expect(Object.values(answers).map((a) => a.status)).toEqual([200, 200, 404, 200, 303, 401, 404]);
    for (const [name, a] of Object.entries(answers)) {
      expect(a.headers.get('x-request-id'), name).toMatch(/^[\w.-]{1,128}$/);
      expect(a.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(a.headers.get('x-frame-options'), name).toBe('DENY');
      expect(a.headers.get('referrer-policy'), name).toBe('no-referrer');
      expect(a.headers.get('x-powered-by'), name).toBeNull();
    }
    // JSON answers, whoever wrote them: no caching, a CSP that loads nothing.
    for (const name of ['api', 'health', 'notFound', 'boardApi', 'boardMissing'] as const) {
      expect(answers[name].headers.get('content-type'), name).toContain('application/json');
      expect(answers[name].headers.get('cache-control'), name).toBe('no-store');
      expect(answers[name].headers.get('content-security-policy'), name).toBe("default-src 'none'; frame-ancestors 'none'");
    }
    expect(answers.boardApi.body.error.code).toBe('unauthenticated');
    expect(answers.boardMissing.body.error.code).toBe('not_found');
    expect(String(answers.boardLogin.body)).toContain('Bull Board · sign in');
  });

  it('counts Bull Board requests under their express route', async () => {
    await t.api.withToken(undefined).get('/admin/login');
    const metrics = (await t.api.get('/metrics')).body as string;
    expect(metrics).toMatch(/wp_http_requests_total\{method="GET",route="\/admin\/login",status="200"\} \d+/);
  });

  it('refuses a compressed body (415) and a deeply nested one (400), and keeps answering', async () => {
    const compressed = await fetch(`${t.api.baseUrl}/api/queues/maintenance/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.api.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ data: { task: 'x' } })),
    });
    expect(compressed.status).toBe(415);
    expect(((await compressed.json()) as { error: { code: string } }).error.code).toBe('unsupported_encoding');
    const deep = await t.api.post('/api/queues/maintenance/jobs', `{"data":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(deep.status).toBe(400);
    expect(deep.body.error).toMatchObject({ code: 'malformed_json', field: '(body)' });
    expect((await t.api.get('/api/queues/maintenance/jobs?state=waiting')).body.jobs).toEqual([]);
  });

  it('answers HEAD like GET without a body, and OPTIONS with Allow', async () => {
    const head = await t.api.request('HEAD', '/api/queues');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    const options = await t.api.request('OPTIONS', '/api/pools/titles/1/pop');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST');
  });

  it('serves readiness and the OpenAPI document as declared routes', async () => {
    const ready = await t.api.withToken(undefined).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', dependencies: { redis: 'up', database: 'up' } });
    const doc = (await t.api.get('/api/openapi.json')).body;
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/metrics'].get['x-access']).toBe('admin');
    expect((await t.api.withToken(undefined).get('/api/openapi.json')).status).toBe(401);
  });
});
