/**
 * The feed parse thread's code (parse-in-thread.ts starts it): parses each document it is sent
 * with parseFeedDocument and answers with the feed, or with the error a caller can rebuild.
 *
 * It imports the parse and nothing else: no Redis client, no database, no queue. That is part of
 * the point (parse-in-thread.ts): the thread's String.prototype stays as V8 makes it.
 */
import { parentPort } from 'node:worker_threads';
import { toError } from '../errors.js';
import { parseFeedDocument, type ParseOptions, type ParsedFeed } from './parse-feed.js';
import { FeedRefreshError, type FailureClass } from './refresh-failure.js';

export interface ParseRequest {
  body: Uint8Array;
  contentType: string | null;
  feedUrl: string;
  options: ParseOptions;
}

export type ParseReply =
  | { feed: ParsedFeed }
  | { refused: { failure: FailureClass; message: string; details: FeedRefreshError['details'] } }
  | { crashed: string };

function answer(request: ParseRequest): ParseReply {
  try {
    return { feed: parseFeedDocument(request.body, request.contentType, request.feedUrl, request.options) };
  } catch (err) {
    if (err instanceof FeedRefreshError) return { refused: { failure: err.failure, message: err.message, details: err.details } };
    const error = toError(err);
    return { crashed: `${error.name}: ${error.message}` };
  }
}

parentPort!.on('message', (request: ParseRequest) => parentPort!.postMessage(answer(request)));
