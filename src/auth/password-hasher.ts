/**
 * bcrypt off the event loop: every password hash and comparison runs on worker threads of its
 * own, so a flood of logins never stalls the thread that serves requests, renews leases and sends
 * heartbeats (a bcrypt check at cost 10 is 50-100 ms of CPU; bcryptjs on the event loop made
 * /healthz wait 25 s behind 400 of them).
 *
 * Invariants:
 * - At most `threads` (AUTH_PASSWORD_THREADS) checks run at once, one per thread.
 * - At most `queueMax` (AUTH_PASSWORD_QUEUE_MAX) more wait for a thread, each at most `waitMs`
 *   (AUTH_PASSWORD_WAIT_MS); a check beyond that is refused at once with PasswordChecksBusyError
 *   (429 `login_busy`, Retry-After), never queued: the work in flight is bounded whatever arrives.
 * - The threads run bcryptjs, the library the hashes were made with, so every stored hash stays
 *   valid. Not a native bcrypt in libuv's pool: that pool (4 threads) is shared with WebCrypto
 *   (token signatures), fs and DNS, which a login flood would then stall instead.
 *
 * On Linux the threads run at nice PASSWORD_THREAD_NICE (10): when the CPUs are short, the kernel
 * gives the event loop (and Redis, PostgreSQL) the time first, so a flood of checks slows logins,
 * not every other request. (A thread that cannot lower its priority runs as it is.)
 *
 * The threads start on first use and are unref'd (they never keep a process alive); a thread
 * that dies fails the check it ran and is replaced by the next check. `close()` ends them.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { RateLimitedError } from '../errors.js';
import { BCRYPT_ROUNDS } from './passwords.js';

export interface PasswordHasherSettings {
  threads: number;
  queueMax: number;
  waitMs: number;
}

/** Too many password checks at once: 429 with Retry-After (the caller tries again shortly). */
export class PasswordChecksBusyError extends RateLimitedError {
  constructor() {
    super('login_busy', 'too many password checks at once; try again in a second', 1);
  }
}

type Task = { op: 'compare'; password: string; hash: string } | { op: 'hash'; password: string; rounds: number };
type Reply = { result: string | boolean } | { error: string };

/**
 * The threads' code, given as text (`eval`): the same whether the platform runs from TypeScript
 * (tsx, vitest) or from dist/, with no file to copy beside the build. CommonJS, as eval'd workers are.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  const os = require('node:os');
  if (tid > 0) os.setPriority(tid, Math.max(os.getPriority(tid), workerData.nice));
} catch {}
parentPort.on('message', (task) => {
  let reply;
  try {
    reply = { result: task.op === 'compare' ? bcrypt.compareSync(task.password, task.hash) : bcrypt.hashSync(task.password, task.rounds) };
  } catch (err) {
    reply = { error: String((err && err.message) || err) };
  }
  parentPort.postMessage(reply);
});
`;

const BCRYPTJS_PATH = createRequire(import.meta.url).resolve('bcryptjs');

/** The threads' niceness (0 normal, 19 lowest): below the event loop's. */
export const PASSWORD_THREAD_NICE = 10;

interface Thread {
  worker: Worker;
  /** The task it runs, settled by its reply or its death. */
  running?: { resolve: (r: string | boolean) => void; reject: (e: Error) => void };
}

interface Waiting {
  task: Task;
  resolve: (r: string | boolean) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class PasswordHasher {
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private readonly line: Waiting[] = [];
  private closed = false;

  constructor(private readonly settings: PasswordHasherSettings) {}

  /** Whether `password` matches the bcrypt `hash`; a malformed hash is no match. */
  async compare(password: string, hash: string): Promise<boolean> {
    return (await this.run({ op: 'compare', password, hash })) === true;
  }

  /** A new bcrypt hash of `password` (cost BCRYPT_ROUNDS). */
  async hash(password: string): Promise<string> {
    return String(await this.run({ op: 'hash', password, rounds: BCRYPT_ROUNDS }));
  }

  /** Checks running and waiting now (for the metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.threads.size - this.idle.length, waiting: this.line.length };
  }

  /** Ends the threads; checks waiting or running are refused. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.line.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new PasswordChecksBusyError());
    }
    const all = [...this.threads];
    this.threads.clear();
    this.idle.length = 0;
    await Promise.all(all.map((t) => t.worker.terminate()));
  }

  private run(task: Task): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new PasswordChecksBusyError());
    const thread = this.idle.pop() ?? (this.threads.size < this.settings.threads ? this.spawn() : undefined);
    if (thread) return this.start(thread, task);
    if (this.line.length >= this.settings.queueMax) return Promise.reject(new PasswordChecksBusyError());
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        task,
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.line.indexOf(waiting);
          if (at >= 0) this.line.splice(at, 1);
          reject(new PasswordChecksBusyError());
        }, this.settings.waitMs),
      };
      waiting.timer.unref();
      this.line.push(waiting);
    });
  }

  private start(thread: Thread, task: Task): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      thread.running = { resolve, reject };
      thread.worker.postMessage(task);
    });
  }

  /** A finished thread takes the next waiting task, or goes idle. */
  private release(thread: Thread): void {
    thread.running = undefined;
    if (!this.threads.has(thread)) return;
    const next = this.line.shift();
    if (!next) {
      this.idle.push(thread);
      return;
    }
    clearTimeout(next.timer);
    this.start(thread, next.task).then(next.resolve, next.reject);
  }

  private spawn(): Thread {
    const worker = new Worker(THREAD_CODE, { eval: true, workerData: { bcryptjs: BCRYPTJS_PATH, nice: PASSWORD_THREAD_NICE }, name: 'password-hasher' });
    worker.unref();
    const thread: Thread = { worker };
    worker.on('message', (reply: Reply) => {
      const running = thread.running;
      this.release(thread);
      if ('error' in reply) running?.reject(new Error(`password hashing failed: ${reply.error}`));
      else running?.resolve(reply.result);
    });
    const die = (err: Error) => {
      if (!this.threads.delete(thread)) return;
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      thread.running?.reject(err);
      thread.running = undefined;
      // Its place is free again: the next waiting task gets a new thread.
      const next = this.line.shift();
      if (next && !this.closed) {
        clearTimeout(next.timer);
        this.start(this.spawn(), next.task).then(next.resolve, next.reject);
      }
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`password hashing thread exited (${code})`)));
    this.threads.add(thread);
    return thread;
  }
}
