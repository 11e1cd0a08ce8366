/**
 * An answer only the HTTP layer gives, about the request as HTTP rather than about what it asks
 * for: a method the path does not take (405), a body too large (413) or in an encoding not taken
 * (415), text that is not JSON. Domains never throw it: they throw the outcomes of src/errors.ts,
 * which error-reply.ts maps to status codes.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** Headers the answer needs (Allow on a 405). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
