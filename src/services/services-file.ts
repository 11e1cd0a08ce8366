/**
 * `DATA_DIR/services.json` (mode 0600): the embedded services of a data directory.
 *
 * It keeps what must survive a restart, so that processes attached to the services find them
 * again when the owner starts once more: each service's port and generated password (created
 * once, never logged). While an owner runs it also names the owner's pid; another platform
 * process started with the same DATA_DIR reads the URLs from here and attaches instead of
 * starting services of its own.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface EmbeddedRedisEntry {
  port: number;
  password: string;
  url: string;
}

export interface EmbeddedPostgresEntry {
  port: number;
  password: string;
  database: string;
  url: string;
}

export interface ServicesState {
  /** The process that runs the services now, and which ones it runs; null when none does. */
  owner: { pid: number; startedAt: string; runs: ('redis' | 'postgres')[] } | null;
  redis?: EmbeddedRedisEntry;
  postgres?: EmbeddedPostgresEntry;
}

export function servicesFile(dataDir: string): string {
  return path.join(dataDir, 'services.json');
}

export function readServicesState(dataDir: string): ServicesState {
  const file = servicesFile(dataDir);
  if (!existsSync(file)) return { owner: null };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as ServicesState;
    return { owner: parsed.owner ?? null, ...(parsed.redis ? { redis: parsed.redis } : {}), ...(parsed.postgres ? { postgres: parsed.postgres } : {}) };
  } catch {
    return { owner: null }; // a file cut short by a crash: start over (new passwords, new ports)
  }
}

/** Writes the state atomically (a temporary file renamed over the old one), readable by its owner only. */
export function writeServicesState(dataDir: string, state: ServicesState): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = servicesFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** A new secret for an embedded service: hex, so it needs no escaping in a URL or a config file. */
export function generatePassword(): string {
  return randomBytes(24).toString('hex');
}
