import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../errors.js';
import { RouteTable } from './route-table.js';

const table = new RouteTable(
  [
    ['get', '/api/pools', 'list'],
    ['post', '/api/pools/:type/:groupId/pop', 'pop'],
    ['get', '/api/things/:id', 'thing'],
    ['delete', '/api/things/:id', 'delete thing'],
    ['get', '/api/things/special', 'special (declared after :id)'],
    ['post', '/api/things/special', 'special post'],
  ].map(([method, path, route]) => ({ method: method!, path: path!, route: route! })),
);

describe('RouteTable', () => {
  it('matches literal segments and params, and gives the declared path', () => {
    expect(table.match('POST', '/api/pools/titles/42/pop')).toEqual({
      kind: 'route',
      route: 'pop',
      path: '/api/pools/:type/:groupId/pop',
      params: { type: 'titles', groupId: '42' },
    });
    expect(table.match('GET', '/api/pools')).toEqual({ kind: 'route', route: 'list', path: '/api/pools', params: {} });
  });

  it('ignores the case of literal segments and one trailing slash, and decodes params', () => {
    expect(table.match('GET', '/API/Pools/')).toMatchObject({ route: 'list' });
    expect(table.match('GET', '/api/things/a%20b')).toMatchObject({ params: { id: 'a b' } });
    expect(table.match('GET', '/api/things/A')).toMatchObject({ params: { id: 'A' } });
  });

  it('takes the first declared route that matches path and method', () => {
    expect(table.match('GET', '/api/things/special')).toMatchObject({ route: 'thing', params: { id: 'special' } });
    expect(table.match('POST', '/api/things/special')).toMatchObject({ route: 'special post' });
  });

  it('answers HEAD with the GET route', () => {
    expect(table.match('HEAD', '/api/pools')).toMatchObject({ kind: 'route', route: 'list' });
  });

  it('names the methods of a declared path called with another one (HEAD with GET)', () => {
    expect(table.match('PUT', '/api/things/7')).toEqual({ kind: 'other-method', path: '/api/things/:id', allow: ['GET', 'DELETE', 'HEAD'] });
    expect(table.match('OPTIONS', '/api/pools/contents/1/pop')).toEqual({ kind: 'other-method', path: '/api/pools/:type/:groupId/pop', allow: ['POST'] });
  });

  it('refuses a malformed percent escape in a param with a 400 naming it', () => {
    let thrown: unknown;
    try {
      table.match('GET', '/api/things/%E0%A4%A');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect(thrown).toMatchObject({ code: 'invalid_request', field: 'id' });
  });

  it('matches nothing else: fewer or more segments, an empty param', () => {
    expect(table.match('GET', '/api/pools/titles')).toBeUndefined();
    expect(table.match('POST', '/api/pools/titles//pop')).toBeUndefined();
    expect(table.match('GET', '/api/nothing/here/at/all/really/deep')).toBeUndefined();
    expect(table.match('GET', '/')).toBeUndefined();
  });

  it('refuses paths it cannot match and routes declared twice when it is built', () => {
    expect(() => new RouteTable([{ method: 'get', path: '/api/*splat', route: 1 }])).toThrow(/neither a literal nor a :param/);
    expect(() => new RouteTable([{ method: 'get', path: 'api/x', route: 1 }])).toThrow(/must start with/);
    expect(
      () =>
        new RouteTable([
          { method: 'get', path: '/api/x', route: 1 },
          { method: 'GET', path: '/api/x', route: 2 },
        ]),
    ).toThrow(/declared twice/);
  });
});
