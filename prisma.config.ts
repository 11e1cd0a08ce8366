import { defineConfig } from 'prisma/config';

// The Prisma CLI is only used for `prisma generate` (offline) and by users who bring the native
// engine. The URL must not come from env('DATABASE_URL'): that throws when the variable is unset.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
});
