/**
 * `npm run db:migration -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql
 * from the difference between the migration history and prisma/schema.prisma. The history is
 * replayed into a temporary database on DATABASE_URL's server, or an in-memory PGlite.
 */
import { loadEnvFile } from '../config/env-file.js';
import { createMigration } from './migrate.js';

loadEnvFile();
const name = process.argv[2];
if (!name) {
  console.error('usage: npm run db:migration -- <name>');
  process.exit(2);
}
const created = await createMigration(name, { shadowUrl: process.env.DATABASE_URL || undefined });
console.log(created.name ? `created prisma/migrations/${created.name}/migration.sql\n\n${created.sql}` : 'no changes: the schema matches the migration history');
process.exit(0);
