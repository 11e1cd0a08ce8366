/**
 * What every request gets, whoever serves it (the dispatcher, an express mount, the 404): its id,
 * the security headers, the error mapping, the request metrics and the access log line.
 *
 * A request is an Exchange: begun when it arrives (its id is X-Request-Id when the caller sent a
 * sane one, else one of this process), answered once by `reply` (a Reply, written with the API's
 * headers) or `fail` (an error, mapped by error-reply.ts; 500s are logged at error level with the
 * request id), and recorded once answered. Requests served by express are recorded when their
 * response finishes (`recordOnFinish`), as express writes them itself.
 *
 * The deadline, a last resort behind the client-side limits of Redis and the database: a request
 * still unanswered after HTTP_OUTAGE_DEADLINE_MS while the dependency monitor finds Redis or the
 * database down is answered 503 naming it (with Retry-After), and any request still unanswered
 * after HTTP_REQUEST_DEADLINE_MS 503 `request_timeout`, whatever its handler is waiting on. One
 * sweep over the requests in flight, a few times a second, rather than a timer per request. What
 * the late handler does afterwards is dropped and logged (`expired`): it never writes the
 * response a second time, and a handler not started yet (its body still coming) is not started.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { OrderedList, type OrderedEntry } from '../lib/ordered-list.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { DependencyDownError } from '../errors.js';
import { errorReply, type Dependency } from './error-reply.js';
import { HttpError } from './http-error.js';
import type { Reply } from './route.js';

/** On every answer, HTML included (Bull Board): no MIME sniffing, no framing, no referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const SANE_REQUEST_ID = /^[\w.-]{1,128}$/;
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The headers of an API answer: its request id, the security headers, a CSP that lets a JSON or
 * text answer load and frame nothing should a browser render it, and no caching (answers are per
 * caller and change). One object literal, so that node stores it as given (writeHead).
 */
function apiHeaders(requestId: string): OutgoingHttpHeaders {
  return {
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cache-control': 'no-store',
  };
}

/** Request ids of this process: a random prefix and a counter (unique enough to find a request in logs, and cheaper than a UUID). */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url');
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}

export interface WrapperOptions {
  logger: Logger;
  metrics: Metrics;
  accessLog: boolean;
  /** The answer of a request unanswered this long while `dependencyDown` names one: 503 naming it. */
  outageDeadlineMs?: number;
  /** The answer of any request unanswered this long: 503 `request_timeout` (0 or unset: none). */
  requestDeadlineMs?: number;
  /** The dependency the monitor finds down now, if any (never waits). */
  dependencyDown?: () => Dependency | undefined;
}

export class RequestWrapper {
  private readonly nextId = requestIds();
  /** Requests begun and not answered yet, oldest first (the deadline's sweep; not a Set: ordered-list.ts). */
  private readonly inFlight = new OrderedList<Exchange>();
  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: WrapperOptions) {
    const first = Math.min(options.outageDeadlineMs ?? Infinity, options.requestDeadlineMs || Infinity);
    if (Number.isFinite(first)) {
      // A quarter of the shortest deadline, at most 250 ms: answers come at most that late.
      this.sweeper = setInterval(() => this.sweep(), Math.max(20, Math.min(250, first / 4)));
      this.sweeper.unref();
    }
  }

  /** Stops the deadline's sweep (the server stopped). */
  close(): void {
    clearInterval(this.sweeper);
  }

  begin(req: IncomingMessage, res: ServerResponse): Exchange {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : this.nextId();
    const ex = new Exchange(req, res, id, this);
    if (this.sweeper) ex.inFlight = this.inFlight.add(ex);
    return ex;
  }

  /** The dependency to name in an outage answer whose error does not say. */
  dependencyDown(): Dependency | undefined {
    return this.options.dependencyDown?.();
  }

  /** A request answered (or gone): out of the deadline's sweep. */
  settled(ex: Exchange): void {
    if (ex.inFlight) this.inFlight.remove(ex.inFlight);
  }

  private sweep(): void {
    const now = performance.now();
    const { outageDeadlineMs = Infinity, requestDeadlineMs } = this.options;
    let down: Dependency | undefined | null = null; // asked once per sweep, when needed
    for (const ex of this.inFlight.values()) {
      const age = now - ex.started;
      // The list is in order of arrival: once one is within both deadlines, so are the rest.
      if (age < outageDeadlineMs && !(requestDeadlineMs && age >= requestDeadlineMs)) break;
      if (down === null) down = this.dependencyDown();
      if (down && age >= outageDeadlineMs) {
        const message = `${down === 'redis' ? 'Redis' : 'the database'} is unavailable; try again shortly`;
        ex.expire(new DependencyDownError(down, message), down);
      } else if (requestDeadlineMs && age >= requestDeadlineMs) {
        ex.expire(new HttpError(503, 'request_timeout', `the request was not answered within ${requestDeadlineMs} ms; try again shortly`), 'request deadline');
      }
    }
  }

  /** The request metrics and the access log line of an answered request. */
  record(ex: Exchange, status: number): void {
    const seconds = (performance.now() - ex.started) / 1000;
    this.options.metrics.http.record(ex.req.method!, ex.route, status, seconds);
    const { logger } = this.options;
    if (this.options.accessLog && logger.isLevelEnabled('info')) {
      logger.info({ reqId: ex.id, method: ex.req.method, path: ex.pathname, status, ms: Math.round(seconds * 1000) }, 'request');
    }
  }

  logExpired(ex: Exchange, reason: string): void {
    const ms = Math.round(performance.now() - ex.started);
    this.options.logger.warn(
      { reqId: ex.id, method: ex.req.method, path: ex.pathname, ms, reason },
      'request answered 503 at its deadline; its handler goes on',
    );
  }

  logLate(ex: Exchange, outcome: unknown): void {
    const ms = Math.round(performance.now() - ex.started);
    this.options.logger.warn(
      { reqId: ex.id, method: ex.req.method, path: ex.pathname, ms, outcome: String(outcome) },
      'a handler ended after its request was answered at the deadline; its outcome is dropped',
    );
  }

  log(level: 'warn' | 'error', message: string, err: unknown, ex: Exchange): void {
    if (level === 'error') this.options.logger.error({ err, reqId: ex.id, path: ex.pathname, method: ex.req.method }, message);
    else this.options.logger.warn({ err: (err as { message?: unknown } | null)?.message, reqId: ex.id, path: ex.pathname }, message);
  }
}

export class Exchange {
  /** The route's declared path for metrics (`/api/pools/:type/:groupId/pop`); 'unmatched' until one is found. */
  route = 'unmatched';
  /** The URL's path, without its query. */
  readonly pathname: string;
  readonly started = performance.now();
  /** Answered by the deadline: whatever its handler does afterwards is dropped (and logged). */
  expired = false;
  private recorded = false;
  private routeOnFinish: (() => string) | undefined;
  /** Its place among the requests in flight, while the deadline's sweep looks at it. */
  inFlight: OrderedEntry<Exchange> | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly id: string,
    private readonly wrapper: RequestWrapper,
  ) {
    const url = req.url!;
    const q = url.indexOf('?');
    this.pathname = q < 0 ? url : url.slice(0, q);
  }

  /** Writes a reply with the API's headers; a JSON body (or JSON text) has its Content-Type and Length. */
  reply(reply: Reply): void {
    if (this.expired) return this.late(`status ${reply.status ?? 200}`);
    this.write(reply);
  }

  private write(reply: Reply): void {
    const { res } = this;
    this.wrapper.settled(this);
    if (res.headersSent) {
      // Only a broken writer gets here; the client cannot be told anything consistent any more.
      res.destroy();
      return;
    }
    const status = reply.status ?? 200;
    const headers = apiHeaders(this.id);
    const data = reply.json ?? reply.text ?? (reply.body === undefined ? undefined : JSON.stringify(reply.body));
    if (data !== undefined) {
      headers['content-type'] = reply.text !== undefined ? 'text/plain; charset=utf-8' : JSON_TYPE;
      headers['content-length'] = Buffer.byteLength(data);
    }
    if (reply.headers) for (const name in reply.headers) headers[name.toLowerCase()] = reply.headers[name];
    res.writeHead(status, headers);
    res.end(data);
    if (!this.routeOnFinish) this.done(status);
  }

  /** Answers with the error's mapping (error-reply.ts), logging it when the mapping says so. */
  fail(err: unknown): void {
    if (this.expired) return this.late((err as { message?: unknown } | null)?.message ?? err);
    const answer = errorReply(err, this.id, this.wrapper.dependencyDown());
    if (answer.log) this.wrapper.log(answer.log.level, answer.log.message, err, this);
    if (this.res.headersSent) {
      this.wrapper.settled(this);
      if (!answer.log) this.wrapper.log('error', 'request failed after its answer began', err, this);
      this.res.destroy();
      return;
    }
    try {
      this.write({ status: answer.status, body: answer.body, ...(answer.headers ? { headers: answer.headers } : {}) });
    } catch (failure) {
      // The error answer itself could not be written (a header a handler set is invalid): cut the connection.
      this.wrapper.log('error', 'the error answer could not be written', failure, this);
      this.res.destroy();
    }
  }

  /**
   * For a response another writer (express) sends: its request id and security headers now, and
   * its record when it finishes, under the route `routeOf` names then.
   */
  recordOnFinish(routeOf: () => string): void {
    const { res } = this;
    res.setHeader('x-request-id', this.id);
    for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name]!);
    this.routeOnFinish = routeOf;
    res.once('finish', () => {
      this.route = routeOf();
      this.done(res.statusCode);
    });
    res.once('close', () => this.wrapper.settled(this));
  }

  /**
   * Answers a request its handler has not answered in time (the wrapper's deadline), unless its
   * answer has begun; from then on the handler's outcome is dropped. `reason` is logged.
   */
  expire(err: unknown, reason: string): void {
    this.wrapper.settled(this);
    if (this.res.headersSent || this.expired) return;
    this.fail(err);
    this.expired = true;
    // Another writer (express) may still write: node reports a write after the end as an 'error'
    // of the response, which must not go unhandled.
    this.res.on('error', () => undefined);
    this.wrapper.logExpired(this, reason);
  }

  /** A handler's outcome after the deadline answered its request: dropped, and logged. */
  private late(outcome: unknown): void {
    this.wrapper.logLate(this, outcome);
  }

  private done(status: number): void {
    if (this.recorded) return;
    this.recorded = true;
    this.wrapper.record(this, status);
  }
}
