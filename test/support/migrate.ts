import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCHEMA_PATH = path.join(ROOT, 'prisma/schema.prisma');
export const MIGRATIONS_DIR = path.join(ROOT, 'prisma/migrations');

// Asynchronous on purpose: a test may serve something from this process's event loop meanwhile.
async function run(args: string[]): Promise<{ ok: boolean; result?: any; error?: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/migrate-child.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

/** Applies migrations (in a child process); returns the applied names or the engine's error. */
export function applyMigrationsChild(url: string, migrationsDir = MIGRATIONS_DIR, schemaPath = SCHEMA_PATH) {
  return run(['apply', url, migrationsDir, schemaPath]);
}

/** Creates a migration from the schema diff (in a child process). */
export function createMigrationChild(name: string, migrationsDir: string, schemaPath: string, shadowUrl: string) {
  return run(['create', name, migrationsDir, schemaPath, shadowUrl]);
}
