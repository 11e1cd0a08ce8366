/** Small process helpers shared by the embedded services and the DATA_DIR lock. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Whether a process with this pid runs (EPERM: it exists, under another user). A zombie does not:
 * a killed owner whose parent is gone is reparented to pid 1, and where pid 1 does not reap (a
 * container started without an init) it stays a zombie for good, which `kill(pid, 0)` still finds.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !zombie(pid);
}

/** Linux: the state letter after the command name in /proc/<pid>/stat ('Z' zombie, 'X' dead). Elsewhere never. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
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
