/** The module hooks of import-recorder.mjs (they run on node's loader thread). */
import { appendFileSync } from 'node:fs';

let target;

export function initialize(data) {
  target = { file: data.file, pattern: new RegExp(data.pattern) };
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (target && target.pattern.test(resolved.url)) appendFileSync(target.file, `${process.pid} ${resolved.url}\n`);
  return resolved;
}
