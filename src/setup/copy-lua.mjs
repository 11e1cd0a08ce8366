// `npm run build` step: tsc compiles src/ to dist/src/ but copies nothing else; the Lua scripts
// (src/**/*.lua, read by src/redis/script.ts next to the module that runs them) go along here.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let copied = 0;
for (const entry of readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(root, 'dist', path.relative(root, from));
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(from, to);
  copied += 1;
}
console.log(`${copied} Lua scripts copied to dist/`);
