/**
 * Child-process half of the global set-up (the WASM schema engine must not run inside
 * vitest's module runner): migrates the PostgreSQL template database given as argv[2] and
 * writes a migrated PGlite data dump to argv[3].
 */
import { writeFileSync } from 'node:fs';
import { applyMigrations } from '../../src/db/migrate.js';
import { startPglite } from '../../src/db/pglite-server.js';

const [templateUrl, dumpFile] = process.argv.slice(2);
if (!templateUrl || !dumpFile) throw new Error('usage: build-templates.ts <template-url> <dump-file>');
await applyMigrations(templateUrl);
const lite = await startPglite({ dataDir: 'memory://' });
await applyMigrations(lite.url);
const dump = await lite.db.dumpDataDir('none');
await lite.stop();
writeFileSync(dumpFile, Buffer.from(await dump.arrayBuffer()));
process.exit(0);
