import { readdirSync, readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { PASSWORD_THREAD_NICE, PasswordChecksBusyError, PasswordHasher } from './password-hasher.js';
import { DUMMY_HASH } from './passwords.js';

describe('PasswordHasher', () => {
  let hasher: PasswordHasher | undefined;
  afterEach(() => hasher?.close());

  it('compares with hashes bcryptjs made, of any cost and version, and makes hashes bcryptjs accepts', async () => {
    hasher = new PasswordHasher({ threads: 2, queueMax: 10, waitMs: 30_000 });
    const old = bcrypt.hashSync('an existing password', 4);
    expect(await hasher.compare('an existing password', old)).toBe(true);
    expect(await hasher.compare('another password', old)).toBe(false);
    expect(await hasher.compare('x', old.replace(/^\$2b\$/, '$2a$'))).toBe(false);
    expect(await hasher.compare('an existing password', old.replace(/^\$2b\$/, '$2a$'))).toBe(true);
    const made = await hasher.hash('a new password');
    expect(made).toMatch(/^\$2b\$10\$/);
    expect(bcrypt.compareSync('a new password', made)).toBe(true);
    expect(await hasher.compare('anything', DUMMY_HASH)).toBe(false);
  });

  it('runs at most `threads` checks at once and lets `queueMax` wait; more are refused at once with 429 login_busy', async () => {
    hasher = new PasswordHasher({ threads: 1, queueMax: 2, waitMs: 60_000 });
    const hash = bcrypt.hashSync('pw', 4);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => hasher!.compare('pw', hash)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected']);
    const refused = (results[3] as PromiseRejectedResult).reason;
    expect(refused).toBeInstanceOf(PasswordChecksBusyError);
    expect(refused).toMatchObject({ code: 'login_busy', retryAfterSeconds: 1 });
    expect(hasher.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses a check that waited longer than waitMs, and serves the next one', async () => {
    hasher = new PasswordHasher({ threads: 1, queueMax: 5, waitMs: 0 });
    const slow = bcrypt.hashSync('pw', 12); // a few hundred ms on the one thread
    const first = hasher.compare('pw', slow);
    await expect(hasher.compare('pw', slow)).rejects.toBeInstanceOf(PasswordChecksBusyError);
    expect(await first).toBe(true);
    expect(await hasher.compare('pw', bcrypt.hashSync('pw', 4))).toBe(true);
  });

  it('fails the check of a thread that died, and starts another for the next', async () => {
    hasher = new PasswordHasher({ threads: 1, queueMax: 1, waitMs: 30_000 });
    const hash = bcrypt.hashSync('pw', 4);
    expect(await hasher.compare('pw', hash)).toBe(true);
    const running = hasher.compare('pw', bcrypt.hashSync('pw', 12));
    const waiting = hasher.compare('pw', hash);
    // End the thread under the running check (as a crash would).
    const threads = (hasher as unknown as { threads: Set<{ worker: { terminate(): Promise<number> } }> }).threads;
    await [...threads][0]!.worker.terminate();
    await expect(running).rejects.toThrow(/exited/);
    expect(await waiting).toBe(true);
    expect(await hasher.compare('pw', hash)).toBe(true);
  });

  it('runs its threads below the event loop (nice PASSWORD_THREAD_NICE) on Linux', async () => {
    hasher = new PasswordHasher({ threads: 1, queueMax: 1, waitMs: 30_000 });
    await hasher.compare('pw', DUMMY_HASH);
    const nices = readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    // The first task is the process's main thread; one of the others is the password thread.
    expect(Math.max(...nices.slice(1))).toBeGreaterThanOrEqual(Math.max(PASSWORD_THREAD_NICE, nices[0]!));
  });

  it('refuses checks once closed', async () => {
    hasher = new PasswordHasher({ threads: 1, queueMax: 1, waitMs: 1000 });
    await hasher.close();
    await expect(hasher.compare('pw', DUMMY_HASH)).rejects.toBeInstanceOf(PasswordChecksBusyError);
  });
});
