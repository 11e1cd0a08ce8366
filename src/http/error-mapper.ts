/**
 * The one error mapper: every error leaves the API as
 * {"error": {"code": "...", "message": "...", "field"?: "..."}}.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DependencyDownError, HttpError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { PayloadError } from '../queues/registry.js';

export interface ErrorBody {
  error: { code: string; message: string; field?: string; details?: unknown; requestId?: string };
}

function body(code: string, message: string, field?: string, details?: unknown): ErrorBody {
  return { error: { code, message, ...(field ? { field } : {}), ...(details !== undefined ? { details } : {}) } };
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** Prisma's known request errors carry a code like P2002 (unique) or P2025 (not found). */
function prismaCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^P\d{4}$/.test(code) ? code : undefined;
}

function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string; name?: string };
  const code = e?.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'P1001', 'P1002', 'P1017', 'P2024'].includes(code) ||
    /Connection is closed|Stream isn't writeable|enableOfflineQueue|Connection terminated|connect ECONNREFUSED/i.test(e?.message ?? '') ||
    e?.name === 'DriverAdapterError' && /connect|closed|terminated/i.test(e?.message ?? '')
  );
}

export function errorMapper(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    const e = err as BodyParserError;
    if (err instanceof HttpError) {
      res.status(err.status).json(body(err.code, err.message, err.field, err.details));
      return;
    }
    if (err instanceof PayloadError) {
      res.status(400).json(body('invalid_payload', err.message, err.field));
      return;
    }
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json(body('malformed_json', 'the request body is not valid JSON', '(body)'));
      return;
    }
    if (e?.type === 'entity.too.large') {
      res.status(413).json(body('body_too_large', `the request body exceeds the limit of ${e.limit} bytes`, '(body)'));
      return;
    }
    if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
      res.status(415).json(body('unsupported_encoding', e.message, '(body)'));
      return;
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      res.status(e.status).json(body('bad_request', e.message));
      return;
    }
    if (err instanceof DependencyDownError) {
      res.status(503).json(body(`${err.dependency}_unavailable`, err.message));
      return;
    }
    const pc = prismaCode(err);
    if (pc === 'P2025') {
      res.status(404).json(body('not_found', 'no such record'));
      return;
    }
    if (pc === 'P2002') {
      res.status(409).json(body('conflict', 'a record with these values already exists'));
      return;
    }
    if (pc === 'P2028' || pc === 'P2024') {
      // A transaction could not get a connection, or ran out of time, while the database was busy.
      logger.warn({ err: (err as Error)?.message, path: req.path }, 'database busy');
      res.status(503).json(body('database_busy', 'the database is busy; try again shortly'));
      return;
    }
    if (isConnectionError(err)) {
      logger.warn({ err: (err as Error)?.message, path: req.path }, 'dependency unavailable');
      res.status(503).json(body('dependency_unavailable', 'a required service is unavailable; try again shortly'));
      return;
    }
    // A bug or an unforeseen failure: never reported as a dependency being down. The request id
    // finds the logged error.
    const requestId = res.locals.requestId as string | undefined;
    logger.error({ err, reqId: requestId, path: req.path, method: req.method }, 'unhandled error');
    res.status(500).json({ error: { code: 'internal_error', message: `internal error; request id ${requestId ?? 'unknown'}`, ...(requestId ? { requestId } : {}) } });
  };
}

/** 404 for any route nobody answered. */
export const notFound: RequestHandler = (req, res) => {
  res.status(404).json(body('not_found', `no route for ${req.method} ${req.path}`));
};
