/**
 * Express's request and response objects for requests served outside express's router (the
 * declared routes, route-table.ts): what express's app.handle does before its router runs.
 *
 * Express makes node's request and response its own by changing their prototypes on every
 * request, which V8 pays for in every later property access on them (bench:pools: the pop route
 * took about a third more CPU a request that way than with the classes below). The API's server instead creates them from classes whose prototypes
 * are the app's request and response (expressServerClasses), so they are express's from the
 * start; expressRequest changes a prototype only for objects made elsewhere (a plain server).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Express, Request, Response } from 'express';

/** http.createServer options whose requests and responses are the app's express request and response. */
export function expressServerClasses(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse as typeof http.ServerResponse };
}

/** Makes node's request and response the app's express ones (req.ip, req.query, res.status, res.json, the app's settings), with empty res.locals. */
export function expressRequest(app: Express, req: IncomingMessage, res: ServerResponse): void {
  const r = req as Request;
  const s = res as Response;
  r.res = s;
  s.req = r;
  if (!Object.prototype.isPrototypeOf.call(app.request, req)) Object.setPrototypeOf(req, app.request);
  if (!Object.prototype.isPrototypeOf.call(app.response, res)) Object.setPrototypeOf(res, app.response);
  s.locals = Object.create(null) as Response['locals'];
  r.originalUrl = req.url!;
  r.baseUrl = '';
}
