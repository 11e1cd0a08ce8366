/**
 * The platforms running from this checkout, per user, so that a process about to start a second
 * one says so. Without it, `npm run start:role -- feeds` in a terminal that lacks the DATA_DIR
 * `npm start` was given silently starts its own Redis and PostgreSQL (a second platform that
 * takes none of the running one's jobs).
 *
 * The process that owns a DATA_DIR's embedded services records itself in
 * `<runtime dir>/<checkout digest>-<pid>.json` ({checkout, dataDir, pid, startedAt}) and removes
 * the record when it stops. The runtime dir is `$XDG_RUNTIME_DIR/worker-platform`, else
 * `<tmpdir>/worker-platform-<uid>`, created 0700; a runtime dir that is not a folder of this user
 * closed to the others is not used (on a shared /tmp another user could plant records), and
 * nothing is recorded or read. A record counts while its process lives and still holds its
 * DATA_DIR's lock (platform.pid): a dead owner's record, or a pid reused by another program, is
 * removed. Everything here is advice: a failure to read or write records is ignored.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive } from './child-process.js';

export interface RunningPlatform {
  checkout: string;
  dataDir: string;
  pid: number;
  startedAt: string;
}

/** This checkout: the folder holding src/ (dist/ in a build). */
const CHECKOUT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Records larger than this are not ours. */
const MAX_RECORD_BYTES = 4096;

function defaultRuntimeDir(): string {
  const xdg = process.env.XDG_RUNTIME_DIR;
  return xdg ? path.join(xdg, 'worker-platform') : path.join(os.tmpdir(), `worker-platform-${process.getuid?.() ?? 'user'}`);
}

/** The runtime dir when it is a private folder of this user (made so when missing), else undefined. */
function privateDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || (stats.mode & 0o077) !== 0) return undefined;
    if (process.getuid && stats.uid !== process.getuid()) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

const prefixOf = (checkout: string) => `${createHash('sha256').update(checkout).digest('hex').slice(0, 16)}-`;

function parse(text: string): RunningPlatform | undefined {
  try {
    const r = JSON.parse(text) as Partial<RunningPlatform>;
    if (typeof r.checkout !== 'string' || typeof r.dataDir !== 'string' || !Number.isInteger(r.pid) || typeof r.startedAt !== 'string') return undefined;
    return { checkout: r.checkout, dataDir: r.dataDir, pid: r.pid!, startedAt: r.startedAt };
  } catch {
    return undefined;
  }
}

/** Whether the recorded process lives and still owns its DATA_DIR. */
function live(r: RunningPlatform): boolean {
  if (!alive(r.pid)) return false;
  try {
    return readFileSync(path.join(r.dataDir, 'platform.pid'), 'utf8').trim() === String(r.pid);
  } catch {
    return false;
  }
}

export interface RunningPlatformsOptions {
  /** Default: $XDG_RUNTIME_DIR/worker-platform, else <tmpdir>/worker-platform-<uid>. */
  runtimeDir?: string;
  checkout?: string;
}

/** The other platforms running from this checkout (their owners), stale records removed. */
export function otherRunningPlatforms(options: RunningPlatformsOptions = {}): RunningPlatform[] {
  const dir = privateDir(options.runtimeDir ?? defaultRuntimeDir());
  if (!dir) return [];
  const checkout = options.checkout ?? CHECKOUT;
  const prefix = prefixOf(checkout);
  const out: RunningPlatform[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix) && n.endsWith('.json'));
  } catch {
    return [];
  }
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const stats = lstatSync(file);
      if (!stats.isFile() || stats.size > MAX_RECORD_BYTES) continue;
      const record = parse(readFileSync(file, 'utf8'));
      if (!record || record.checkout !== checkout || record.pid === process.pid) continue;
      if (live(record)) out.push(record);
      else rmSync(file, { force: true });
    } catch {
      /* gone meanwhile, or unreadable: not a platform we can tell about */
    }
  }
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/** Records this process as the owner of `dataDir`'s services; the returned function removes the record. */
export function recordRunningPlatform(dataDir: string, options: RunningPlatformsOptions = {}): () => void {
  const dir = privateDir(options.runtimeDir ?? defaultRuntimeDir());
  if (!dir) return () => undefined;
  const checkout = options.checkout ?? CHECKOUT;
  const file = path.join(dir, `${prefixOf(checkout)}${process.pid}.json`);
  const record: RunningPlatform = { checkout, dataDir: path.resolve(dataDir), pid: process.pid, startedAt: new Date().toISOString() };
  try {
    writeFileSync(file, JSON.stringify(record), { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}
