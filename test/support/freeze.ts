/**
 * A hung server, as a test makes one: its process and every descendant stopped with SIGSTOP. Its
 * sockets stay open and the kernel keeps acknowledging what is sent, so a client sees a connection
 * that is up and answers nothing (unlike a stopped server, whose connections close). Thawed with
 * SIGCONT; stopped processes are found by pid, never by name.
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

/**
 * Stops `pid` (first, so that it starts no new child) and then its descendants; returns the thaw,
 * which continues every one of them. Idempotent.
 */
export function freezeProcessTree(pid: number): () => void {
  const frozen: number[] = [];
  const stop = (p: number) => {
    try {
      process.kill(p, 'SIGSTOP');
      frozen.push(p);
    } catch {
      /* gone */
    }
  };
  stop(pid);
  for (let i = 0; i < frozen.length; i++) for (const child of childrenOf(frozen[i]!)) stop(child);
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const p of frozen) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
  };
}
