/** Small process helpers shared by the embedded services and the DATA_DIR lock. */
import type { ChildProcess } from 'node:child_process';

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Whether a process with this pid exists (EPERM: it exists, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves once the child has exited (at once if it already has), with how it ended. */
export function exited(child: ChildProcess): Promise<ExitInfo> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
    : new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

/**
 * Runs `spawn` with the process umask set to 0077, so that whatever the child creates (redis-server's
 * AOF files, its log) is readable by its owner only. The child inherits the umask at fork, which
 * happens inside the synchronous spawn call; the old umask is back before anything else runs.
 */
export function spawnOwnerOnly<T>(spawn: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    // a worker thread cannot change the umask: the caller's own umask applies
  }
  try {
    return spawn();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}
