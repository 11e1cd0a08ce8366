/**
 * Serves the declared routes (route.ts) on node:http, with no framework in between. For a request
 * whose path and method a route declares (route-table.ts):
 *
 *   1. the credential (authenticate.ts), unless the route is public: 401/503 otherwise;
 *   2. the role: 403 on an admin route for another role (before any body is read);
 *   3. the JSON body, when the route declares one (json-body.ts: 400/413/415);
 *   4. params, query and body through the route's schemas (route-input.ts: 400 naming the field);
 *   5. the handler, with that input (unless the deadline answered the request meanwhile, see
 *      request-wrapper.ts); on `revocation: 'in-handler'` routes the credential check the
 *      handler's script did not take is made before answering;
 *   6. its Reply, or its error, written by the request's Exchange (request-wrapper.ts).
 *
 * A path declared for other methods only answers 405 with Allow (OPTIONS: 204 with Allow); a
 * param with a malformed percent-escape 400. A request no route declares is left to the caller
 * (`dispatch` returns false).
 */
import type { IncomingMessage } from 'node:http';
import { roleAllows } from '../auth/roles.js';
import { ForbiddenError } from '../errors.js';
import type { Authenticate, AuthenticateOptions } from './authenticate.js';
import { HttpError } from './http-error.js';
import { readJsonBody } from './json-body.js';
import type { Exchange } from './request-wrapper.js';
import { validateInput } from './route-input.js';
import { RouteTable } from './route-table.js';
import type { AnyRoute, AuthInfo, RouteInput } from './route.js';

export interface DispatcherOptions {
  authenticate: Authenticate;
  /** Largest JSON body, bytes (HTTP_BODY_LIMIT). */
  bodyLimit: number;
  /** The client's address of a request (client-address.ts). */
  clientAddress: (req: IncomingMessage) => string | undefined;
}

const CURRENT: AuthenticateOptions = {};
const DEFERRED: AuthenticateOptions = { deferRevocation: true };

/** A handler's input; the client's address is read only by the handlers that use it. */
class Input implements RouteInput<unknown, unknown, unknown> {
  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly auth: AuthInfo | undefined,
    private readonly req: IncomingMessage,
    private readonly clientAddress: (req: IncomingMessage) => string | undefined,
  ) {}

  get ip(): string | undefined {
    return this.clientAddress(this.req);
  }
}

async function serve(route: AnyRoute, params: Record<string, string>, ex: Exchange, options: DispatcherOptions): Promise<void> {
  try {
    const { req } = ex;
    let auth: AuthInfo | undefined;
    let staticCredential = false;
    if (route.access !== 'public') {
      staticCredential = route.staticCredential?.(req.headers.authorization) === true;
      if (!staticCredential) {
        const verified = options.authenticate(req.headers, route.revocation === 'in-handler' ? DEFERRED : CURRENT);
        auth = verified instanceof Promise ? await verified : verified;
      }
    }
    if (route.access === 'admin' && !staticCredential && !(auth && roleAllows(auth.role, 'admin'))) {
      throw new ForbiddenError('forbidden', `${route.method.toUpperCase()} ${route.path} is for admins`);
    }
    const body = route.body ? await readJsonBody(req, options.bodyLimit) : undefined;
    // Answered at its deadline while its credential or body was still coming: the caller was told
    // 503, so nothing of it may happen now.
    if (ex.expired) return;
    const input = validateInput(route, params, req.url!, body);
    const reply = await route.handler(new Input(input.params, input.query, input.body, auth, req, options.clientAddress));
    // A handler that left the credential check unused must not answer without it.
    if (auth?.revocation && !auth.revocation.taken) await auth.revocation.check();
    ex.reply(reply);
  } catch (err) {
    ex.fail(err);
  }
}

/** The declared routes as one function: true when it answers the request (then it does, once). */
export function dispatcher(routes: AnyRoute[], options: DispatcherOptions): (ex: Exchange) => boolean {
  const table = new RouteTable(routes.map((route) => ({ method: route.method, path: route.path, route })));
  return (ex) => {
    const method = ex.req.method!;
    let found;
    try {
      found = table.match(method, ex.pathname);
    } catch (err) {
      ex.fail(err);
      return true;
    }
    if (!found) return false;
    ex.route = found.path;
    if (found.kind === 'route') {
      void serve(found.route, found.params, ex, options);
      return true;
    }
    const allow = found.allow.join(', ');
    if (method === 'OPTIONS') ex.reply({ status: 204, headers: { allow } });
    else ex.fail(new HttpError(405, 'method_not_allowed', `${method} is not allowed on ${found.path}; allowed: ${allow}`, undefined, { allow }));
    return true;
  };
}
