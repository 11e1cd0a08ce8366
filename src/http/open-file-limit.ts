/**
 * The process's open-file limit (RLIMIT_NOFILE), which bounds its connections: every accepted
 * connection takes a file descriptor, and so does every Redis or PostgreSQL connection and every
 * file the process opens. Read from /proc/self/limits (Linux; elsewhere unknown).
 *
 * Node raises the soft limit to the hard one itself when it starts (PlatformInit in node.cc), so
 * the soft limit read here is already as high as the process may go; past it only the hard limit
 * helps (`ulimit -Hn`, systemd's LimitNOFILE=, docker's --ulimit nofile=).
 */
import { readFileSync } from 'node:fs';

export interface OpenFileLimit {
  soft: number;
  hard: number;
}

/** Parses the "Max open files" line of a /proc/<pid>/limits text ("unlimited" as Infinity). */
export function parseOpenFileLimit(limits: string): OpenFileLimit | undefined {
  const match = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits);
  if (!match) return undefined;
  const value = (v: string) => (v === 'unlimited' ? Infinity : Number(v));
  return { soft: value(match[1]!), hard: value(match[2]!) };
}

export function openFileLimit(): OpenFileLimit | undefined {
  try {
    return parseOpenFileLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}
