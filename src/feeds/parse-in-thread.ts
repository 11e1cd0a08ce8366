/**
 * Feed documents parsed on a thread of their own (parse-thread-entry.ts), one at a time, in the
 * order they come: the refresh awaits its parse while the process's event loop goes on serving.
 *
 * Why a thread:
 * - A large document is hundreds of milliseconds of CPU (a 5 MB feed of rich articles about
 *   0.3 s, docs/benchmarks.md): on the event loop that would hold every other job of the process,
 *   its lock renewals, its heartbeats and its /healthz behind it. On the thread the two cores of a
 *   small machine both work: the loop does the network and the database, the thread the parsing.
 * - The thread loads the parse and nothing else. A process that has loaded ioredis 6 has its
 *   String.prototype in V8's slow mode for good (ioredis's `VerbatimString extends String`;
 *   `npm run bench:strings`): charCodeAt, startsWith and toLowerCase several times slower, the
 *   whole parse 1.3-1.5x. The thread is another V8 context with a String.prototype of its own.
 * - A hostile document cannot take the process: the thread's heap is bounded (HEAP_LIMIT_MB), and
 *   a parse still running at its refresh's time limit is stopped with its thread.
 *
 * Invariants:
 * - One parse runs at a time; the others wait in line (at most the feeds worker's concurrency).
 * - Every parse settles: with the feed; with the FeedRefreshError the parse threw (rebuilt as
 *   one); with FeedRefreshError('too_large') when the document needed more than HEAP_LIMIT_MB; with
 *   the abort reason when its signal fires (waiting: it leaves the line; running: the thread is
 *   ended); with an Error when the thread died of anything else. A thread that ends is replaced by
 *   the next parse.
 * - The thread starts on first use and is unref'd (it never keeps a process alive); `close()`
 *   ends it and refuses what waits.
 *
 * The thread runs the same code as the process: TypeScript through tsx's loader when the process
 * runs from the sources (npm start, tests), JavaScript from dist/ after a build.
 */
import { Worker } from 'node:worker_threads';
import type { ParseOptions, ParsedFeed } from './parse-feed.js';
import type { ParseReply, ParseRequest } from './parse-thread-entry.js';
import { FeedRefreshError } from './refresh-failure.js';

/**
 * The thread's old-generation heap limit. A 10 MB document (FEED_MAX_BYTES' default) of rich
 * articles peaks at about 150 MB of heap while it is parsed; a document that needs far more is
 * refused as too large instead of growing the process.
 */
export const HEAP_LIMIT_MB = 768;

const ENTRY_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const ENTRY = new URL(`./parse-thread-entry${ENTRY_EXTENSION}`, import.meta.url).href;
/** tsx's loader, registered in the thread when it runs TypeScript (a thread has no loader of the process's). */
const TSX_API = ENTRY_EXTENSION === '.ts' ? import.meta.resolve('tsx/esm/api') : null;

const THREAD_CODE = `
const { workerData } = require('node:worker_threads');
const loader = workerData.tsxApi ? import(workerData.tsxApi).then((tsx) => tsx.register()) : Promise.resolve();
loader.then(() => import(workerData.entry));
`;

interface Parse {
  request: ParseRequest;
  resolve: (feed: ParsedFeed) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class FeedParseThread {
  private worker: Worker | null = null;
  private running: Parse | null = null;
  private readonly line: Parse[] = [];
  private closed = false;

  /** parseFeedDocument on the thread. Rejects as described at the top; `signal` gives the parse up. */
  parse(body: Uint8Array, contentType: string | null | undefined, feedUrl: string, options: ParseOptions = {}, signal?: AbortSignal): Promise<ParsedFeed> {
    if (this.closed) return Promise.reject(new Error('feed parser closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const parse: Parse = { request: { body, contentType: contentType ?? null, feedUrl, options }, resolve, reject, signal };
      if (signal) {
        parse.onAbort = () => this.giveUp(parse);
        signal.addEventListener('abort', parse.onAbort, { once: true });
      }
      this.line.push(parse);
      this.next();
    });
  }

  /** Parses waiting and running now (for the metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running ? 1 : 0, waiting: this.line.length };
  }

  /** Ends the thread; a parse running or waiting is refused. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const refused = new Error('feed parser closed');
    for (const parse of this.line.splice(0)) this.settle(parse, () => parse.reject(refused));
    const running = this.running;
    if (running) this.settle(running, () => running.reject(refused));
    await this.endThread();
  }

  private next(): void {
    if (this.running || this.closed) return;
    const parse = this.line.shift();
    if (!parse) return;
    this.running = parse;
    this.thread().postMessage(parse.request);
  }

  /** Settles `parse` once: it leaves the line or the thread, and stops listening to its signal. */
  private settle(parse: Parse, how: () => void): void {
    if (this.running === parse) this.running = null;
    else {
      const at = this.line.indexOf(parse);
      if (at < 0) return;
      this.line.splice(at, 1);
    }
    if (parse.onAbort) parse.signal!.removeEventListener('abort', parse.onAbort);
    how();
  }

  private giveUp(parse: Parse): void {
    const wasRunning = this.running === parse;
    this.settle(parse, () => parse.reject(parse.signal!.reason));
    // The thread is busy with a parse nobody waits for, maybe forever: end it; the next parse starts another.
    if (wasRunning) {
      void this.endThread();
      this.next();
    }
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_CODE, {
      eval: true,
      name: 'feed-parser',
      workerData: { entry: ENTRY, tsxApi: TSX_API },
      resourceLimits: { maxOldGenerationSizeMb: HEAP_LIMIT_MB },
    });
    worker.unref();
    worker.on('message', (reply: ParseReply) => {
      const parse = this.running;
      if (this.worker !== worker || !parse) return;
      this.settle(parse, () => {
        if ('feed' in reply) parse.resolve(reply.feed);
        else if ('refused' in reply) parse.reject(new FeedRefreshError(reply.refused.failure, reply.refused.message, reply.refused.details));
        else parse.reject(new Error(`feed parse failed: ${reply.crashed}`));
      });
      this.next();
    });
    const died = (err: Error & { code?: string }) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const parse = this.running;
      if (parse) {
        const reason =
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new FeedRefreshError('too_large', `the document needs more than ${HEAP_LIMIT_MB} MB of memory to read`)
            : new Error(`feed parse thread died: ${err.message}`);
        this.settle(parse, () => parse.reject(reason));
      }
      this.next();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private async endThread(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
