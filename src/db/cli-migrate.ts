/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded PostgreSQL). */
import { loadConfig } from '../config/index.js';
import { loadEnvFile } from '../config/env-file.js';
import { provideServices } from '../services/provide-services.js';
import { applyMigrations } from './migrate.js';

loadEnvFile();
const config = loadConfig();
const services = await provideServices(config, undefined, { database: true, redis: false });
try {
  const applied = await applyMigrations(services.database.url);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await services.stop();
}
// The WASM engine keeps handles open that it never disposes.
process.exit(0);
