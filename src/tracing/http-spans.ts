/**
 * A server span per API request (the HTTP core is node:http, src/http/app.ts): begun when the
 * request arrives, ended when its response closes, named by method and declared route
 * (`POST /api/ips/:id/crawl`), and active while the request is handled, so that the jobs it adds
 * and the Redis commands and queries it makes are its children. A `traceparent` header a client
 * sends (W3C trace context) makes the request part of the client's trace.
 *
 * Recorded: the method, the declared route (not the path: ids stay out of span names), the status
 * and the request id (X-Request-Id, to go from a log line to its trace). Never recorded: the URL or
 * its query, headers (Authorization, cookies), bodies. Health probes and metric scrapes
 * (/healthz, /readyz, /metrics) get no span: they would be most of the traces.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { RequestObserver } from '../context.js';

const UNTRACED: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);
/** Methods named as they are; any other is `_OTHER` (OpenTelemetry's convention: a client picks the method). */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const UNMATCHED = 'unmatched';

export function requestSpans(tracer: Tracer): RequestObserver {
  return (ex, serve) => {
    if (UNTRACED.has(ex.pathname)) return serve();
    const method = METHODS.has(ex.req.method ?? '') ? ex.req.method! : '_OTHER';
    const parent = propagation.extract(ROOT_CONTEXT, ex.req.headers);
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'worker_platform.request_id': ex.id } },
      parent,
    );
    ex.res.once('close', () => {
      // The route is known once the dispatcher (or the express mount, at 'finish') matched one.
      if (ex.route !== UNMATCHED) {
        span.setAttribute('http.route', ex.route);
        span.updateName(`${method} ${ex.route}`);
      }
      const status = ex.res.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!ex.res.writableFinished) span.setAttribute('error.type', 'response_aborted');
      span.end();
    });
    const active = trace.setSpan(parent, span);
    // Body chunks and the response's events arrive from the socket, outside this call: their
    // listeners run in the request's context too.
    context.bind(active, ex.req);
    context.bind(active, ex.res);
    context.with(active, serve);
  };
}
