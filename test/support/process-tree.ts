/**
 * A process with everything it started, as a test signals it (Linux: descendants found in /proc,
 * by pid, never by name):
 * - freezeProcessTree: a hung server, its process and every descendant stopped with SIGSTOP. Its
 *   sockets stay open and the kernel keeps acknowledging what is sent, so a client sees a
 *   connection that is up and answers nothing (unlike a stopped server, whose connections close).
 *   Thawed with SIGCONT.
 * - killProcessTree: a test process that did not start in time, whose redis-server, PostgreSQL or
 *   servers would otherwise run on as orphans.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of a process's children, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

/** SIGSTOP to `pid` and then each descendant, parents before children (a stopped parent starts no new one); the pids stopped. */
function stopProcessTree(pid: number): number[] {
  const stopped: number[] = [];
  const stop = (p: number) => {
    try {
      process.kill(p, 'SIGSTOP');
      stopped.push(p);
    } catch {
      /* gone */
    }
  };
  stop(pid);
  for (let i = 0; i < stopped.length; i++) for (const child of childrenOf(stopped[i]!)) stop(child);
  return stopped;
}

/**
 * SIGKILL to `pid` and every process it started, found before any dies (an orphan is adopted by
 * pid 1 and no longer found as its descendant); returns the pids killed.
 */
export function killProcessTree(pid: number): number[] {
  const tree = stopProcessTree(pid);
  for (const p of tree) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return tree;
}

/**
 * Stops `pid` (first, so that it starts no new child) and then its descendants; returns the thaw,
 * which continues every one of them, children before their parents (a parent resumed first could
 * take a stopped child for a hung one). Idempotent.
 */
export function freezeProcessTree(pid: number): () => void {
  const frozen = stopProcessTree(pid);
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const p of frozen.reverse()) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
  };
}
