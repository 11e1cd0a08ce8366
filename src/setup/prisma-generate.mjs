// Runs `prisma generate` offline (postinstall and set-up). Prisma's CLI wants a schema engine
// binary it would otherwise download; generate never runs it, so any existing file will do.
// Skips the work when the generated client matches the schema (hash stamp).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const schema = path.join(root, 'prisma/schema.prisma');
const out = path.join(root, 'src/generated/prisma');
const stamp = path.join(out, '.schema-hash');
const prismaBin = path.join(root, 'node_modules/.bin/prisma');

export function prismaGenerate({ force = false } = {}) {
  if (!existsSync(prismaBin)) return false; // dependencies not installed yet
  const hash = createHash('sha256').update(readFileSync(schema)).digest('hex');
  if (!force && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return false;
  const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY || (existsSync('/bin/false') ? '/bin/false' : process.execPath);
  const r = spawnSync(prismaBin, ['generate'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
  });
  if (r.status !== 0) throw new Error(`prisma generate failed (exit ${r.status})`);
  writeFileSync(stamp, hash);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  prismaGenerate({ force: process.argv.includes('--force') });
}
