/** Small process helpers shared by the embedded services and the DATA_DIR lock. */
import type { ChildProcess } from 'node:child_process';

/** Whether a process with this pid exists (EPERM: it exists, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves once the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}
