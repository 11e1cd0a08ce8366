/**
 * `npm run db:migration -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql
 * from the difference between the migration history and prisma/schema.prisma. The history is
 * replayed into a temporary database on the PostgreSQL server of DATABASE_URL, or of the
 * embedded PostgreSQL (that of a running platform, or one started for this command).
 */
import { loadConfig } from '../config/index.js';
import { loadEnvFile } from '../config/env-file.js';
import { provideServices } from '../services/provide-services.js';
import { createMigration } from './migrate.js';

loadEnvFile();
const name = process.argv[2];
if (!name) {
  console.error('usage: npm run db:migration -- <name>');
  process.exit(2);
}
const services = await provideServices(loadConfig(), undefined, { database: true, redis: false });
try {
  const created = await createMigration(name, { shadowUrl: services.database.url });
  console.log(
    created.name ? `created prisma/migrations/${created.name}/migration.sql\n\n${created.sql}` : 'no changes: the schema matches the migration history',
  );
} finally {
  await services.stop();
}
// The WASM engine keeps handles open that it never disposes.
process.exit(0);
