import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether String.prototype has fast properties in a fresh process that loads ioredis, refastened or not. */
function fastAfterIoredis(refasten: boolean): boolean {
  const code = `
    const probe = new Function('o', 'return %HasFastProperties(o)');
    await import('ioredis');
    ${refasten ? "(await import('./src/runtime/string-prototype.ts')).refastenStringPrototype();" : ''}
    console.log(JSON.stringify(probe(String.prototype)));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as boolean;
}

describe('refastenStringPrototype', () => {
  it('makes String.prototype fast again after ioredis made it slow', () => {
    expect(fastAfterIoredis(false)).toBe(false);
    expect(fastAfterIoredis(true)).toBe(true);
  });
});
