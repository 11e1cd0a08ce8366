/**
 * Finds the Chromium browser processes (not their renderer/GPU helpers) whose profile lies
 * under a directory, the way an operator would with `ps`: by their --user-data-dir.
 */
import { readdirSync, readFileSync } from 'node:fs';

export function chromiumBrowserPids(profileRoot: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile
    }
    const inRoot = args.some((a) => a.startsWith(`--user-data-dir=${profileRoot}`));
    if (inRoot && !args.some((a) => a.startsWith('--type='))) pids.push(Number(entry));
  }
  return pids;
}
