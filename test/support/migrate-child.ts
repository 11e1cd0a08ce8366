/**
 * Runs the migration engine in a child process for tests (the WASM schema engine must not run
 * inside vitest's module runner). Prints one JSON line: {ok, result} or {ok: false, error}.
 *   apply  <url> <migrationsDir> <schemaPath>
 *   create <name> <migrationsDir> <schemaPath> <shadowUrl>
 */
import { applyMigrations, createMigration } from '../../src/db/migrate.js';

const [cmd, a, migrationsDir, schemaPath, shadowUrl] = process.argv.slice(2);
try {
  const result =
    cmd === 'apply'
      ? await applyMigrations(a!, { migrationsDir: migrationsDir!, schemaPath: schemaPath! })
      : await createMigration(a!, { migrationsDir: migrationsDir!, schemaPath: schemaPath!, shadowUrl: shadowUrl! });
  console.log(JSON.stringify({ ok: true, result }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: (err as Error).message }));
}
process.exit(0);
