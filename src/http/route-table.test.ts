import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../errors.js';
import { expressRequest, expressServerClasses } from './express-objects.js';
import { routeTable, type TableHooks, type TableRoute } from './route-table.js';

/** Answers with what the route saw. */
const echo =
  (name: string): RequestHandler =>
  (req, res) => {
    res.json({ name, params: req.params, route: res.locals.route, query: req.query });
  };

const routes: TableRoute[] = [
  { method: 'get', path: '/api/pools', handlers: [echo('list')] },
  { method: 'post', path: '/api/pools/:type/:groupId/pop', handlers: [echo('pop')] },
  { method: 'get', path: '/api/things/:id', handlers: [echo('thing')] },
  { method: 'delete', path: '/api/things/:id', handlers: [echo('delete thing')] },
  { method: 'get', path: '/api/things/special', handlers: [echo('special (declared after :id)')] },
  { method: 'post', path: '/api/things/special', handlers: [echo('special post')] },
  {
    method: 'get',
    path: '/api/guarded',
    handlers: [
      (req, res, next) => {
        if (req.headers.authorization !== 'yes') return next(new HttpError(401, 'unauthenticated', 'no'));
        res.locals.seen = ['guard'];
        next();
      },
      (_req, res, next) => {
        res.locals.seen.push('second');
        setImmediate(next);
      },
      (_req, res) => {
        res.json({ seen: [...res.locals.seen, 'handler'] });
      },
    ],
  },
  {
    method: 'get',
    path: '/api/fails/:how',
    handlers: [
      async (req) => {
        if (req.params.how === 'throw') throw new HttpError(418, 'thrown', 'sync throw in an async handler');
        await Promise.resolve();
        throw new HttpError(418, 'rejected', 'rejected later');
      },
    ],
  },
  {
    method: 'get',
    path: '/api/whoami',
    handlers: [
      (req, res) => {
        res.status(203).json({ ip: req.ip, expressApp: req.app === app, originalUrl: req.originalUrl, path: req.path });
      },
    ],
  },
  { method: 'get', path: '/api/passes', handlers: [(_req, _res, next) => next()] },
  {
    method: 'get',
    path: '/api/sync-throw',
    handlers: [
      () => {
        throw new HttpError(418, 'sync', 'a plain function threw');
      },
    ],
  },
];

let app: Express;
let server: http.Server;
let base: string;
/** The same table on a server whose requests are express's from the start (as the API's). */
let classServer: http.Server;
let classBase: string;

const errors: ErrorRequestHandler = (err: HttpError, _req, res, _next) => {
  res.status(err.status ?? 500).json({ error: { code: err.code, message: err.message, field: err.field } });
};

beforeAll(async () => {
  app = express();
  app.set('trust proxy', true);
  app.get('/healthz', (_req, res) => {
    res.json({ fellThrough: true });
  });
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 'not_found' } });
  });
  app.use(errors);
  const serve = routeTable(routes, {
    enter: (req, res) => expressRequest(app, req, res),
    leave: (err, req, res) => (err === undefined ? app(req, res) : errors(err, req, res, () => undefined)),
  });
  const listener: http.RequestListener = (req, res) => {
    if (!serve(req, res)) void app(req, res);
  };
  server = http.createServer(listener);
  classServer = http.createServer(expressServerClasses(app), listener);
  for (const s of [server, classServer]) await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  classBase = `http://127.0.0.1:${(classServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of [server, classServer]) await new Promise((resolve) => s.close(resolve));
});

async function call(method: string, path: string, headers: Record<string, string> = {}, on = base) {
  const res = await fetch(`${on}${path}`, { method, headers });
  const text = await res.text();
  return { status: res.status, allow: res.headers.get('allow'), body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

const noHooks: TableHooks = { enter: () => undefined, leave: () => undefined };

describe('routeTable', () => {
  it('matches literal segments and params, and leaves the declared path for metrics', async () => {
    const r = await call('POST', '/api/pools/titles/42/pop?x=1');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: 'pop', params: { type: 'titles', groupId: '42' }, route: '/api/pools/:type/:groupId/pop', query: { x: '1' } });
  });

  it('follows express defaults: literal case ignored, one trailing slash allowed, params decoded', async () => {
    expect((await call('GET', '/API/Pools/')).body?.name).toBe('list');
    expect((await call('GET', '/api/things/a%20b')).body?.params).toEqual({ id: 'a b' });
    expect((await call('GET', '/api/things/A')).body?.params).toEqual({ id: 'A' });
  });

  it('takes the first declared route that matches path and method', async () => {
    // GET /api/things/:id is declared before GET /api/things/special.
    expect((await call('GET', '/api/things/special')).body?.name).toBe('thing');
    // No POST on :id: the later literal route answers.
    expect((await call('POST', '/api/things/special')).body?.name).toBe('special post');
  });

  it('answers HEAD with the GET route and no body', async () => {
    const r = await call('HEAD', '/api/pools');
    expect(r.status).toBe(200);
    expect(r.body).toBeUndefined();
  });

  it('answers 405 with Allow for a declared path and another method, 204 with Allow for OPTIONS', async () => {
    const r = await call('PUT', '/api/things/7');
    expect(r.status).toBe(405);
    expect(r.body?.error.code).toBe('method_not_allowed');
    expect(r.allow).toBe('GET, DELETE, HEAD');
    const o = await call('OPTIONS', '/api/pools/contents/1/pop');
    expect(o.status).toBe(204);
    expect(o.allow).toBe('POST');
  });

  it('refuses a malformed percent escape in a param with 400 naming it', async () => {
    const r = await call('GET', '/api/things/%E0%A4%A');
    expect(r.status).toBe(400);
    expect(r.body?.error).toMatchObject({ code: 'invalid_request', field: 'id' });
  });

  it('leaves requests it does not serve to the express app', async () => {
    expect((await call('GET', '/healthz')).body).toEqual({ fellThrough: true });
    expect((await call('GET', '/api/pools/titles')).status).toBe(404);
    expect((await call('POST', '/api/pools/titles//pop')).status).toBe(404);
    expect((await call('GET', '/api/nothing/here/at/all/really/deep')).status).toBe(404);
  });

  it("serves its routes with express's request and response, the app's settings included", async () => {
    for (const on of [base, classBase]) {
      const r = await call('GET', '/api/whoami?x=1', { 'x-forwarded-for': '203.0.113.9' }, on);
      expect(r.status).toBe(203);
      expect(r.body).toEqual({ ip: '203.0.113.9', expressApp: true, originalUrl: '/api/whoami?x=1', path: '/api/whoami' });
      // Requests it does not serve still reach the app.
      expect((await call('GET', '/healthz', {}, on)).body).toEqual({ fellThrough: true });
    }
  });

  it('hands a request whose chain ends in next() on to the express app', async () => {
    const r = await call('GET', '/api/passes');
    expect(r.status).toBe(404);
    expect(r.body?.error.code).toBe('not_found');
  });

  it('runs the chain in order, async steps included, and stops at an error', async () => {
    expect((await call('GET', '/api/guarded', { authorization: 'yes' })).body).toEqual({ seen: ['guard', 'second', 'handler'] });
    const refused = await call('GET', '/api/guarded');
    expect(refused.status).toBe(401);
    expect(refused.body?.error.code).toBe('unauthenticated');
  });

  it('hands thrown errors and rejections to the error handlers', async () => {
    expect((await call('GET', '/api/fails/throw')).body?.error.code).toBe('thrown');
    expect((await call('GET', '/api/fails/later')).body?.error.code).toBe('rejected');
    expect((await call('GET', '/api/sync-throw')).body?.error.code).toBe('sync');
  });

  it('refuses paths it cannot match and routes declared twice when the table is built', () => {
    expect(() => routeTable([{ method: 'get', path: '/api/*splat', handlers: [] }], noHooks)).toThrow(/neither a literal nor a :param/);
    expect(() => routeTable([{ method: 'get', path: 'api/x', handlers: [] }], noHooks)).toThrow(/must start with/);
    expect(() =>
      routeTable([
        { method: 'get', path: '/api/x', handlers: [] },
        { method: 'GET', path: '/api/x', handlers: [] },
      ], noHooks),
    ).toThrow(/declared twice/);
  });
});
