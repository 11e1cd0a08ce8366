import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { declaredSlots, RedisScript } from './script.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-lua-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return pathToFileURL(path.join(dir, name));
};

/** What a Redis client receives: EVALSHA's arguments. */
function recorder() {
  const calls: unknown[][] = [];
  return { calls, client: { evalsha: async (...a: unknown[]) => (calls.push(a), 'ok') } as never };
}

describe('RedisScript', () => {
  it('reads the named KEYS and ARGV slots of a header; tails and (none) carry no name', () => {
    expect(declaredSlots('-- KEYS[1] pool  the list\n-- KEYS[2..3] (optional) guard\n-- ARGV[1] count\n-- ARGV[2..] more\n-- Returns x\nreturn 1')).toEqual({
      keys: ['pool'],
      args: ['count'],
    });
    expect(declaredSlots('-- KEYS[1..] items\n-- ARGV (none)\nreturn 1')).toEqual({ keys: [], args: [] });
    expect(() => declaredSlots('local x = 1\n-- KEYS[1] pool')).toThrow(/does not start with its KEYS\/ARGV list/);
    expect(() => declaredSlots('-- Pops.\n-- KEYS[1] pool')).toThrow(/does not start/);
    expect(() => declaredSlots('-- KEYS[2] pool\nreturn 1')).toThrow(/out of order/);
    expect(() => declaredSlots('-- KEYS[1] (the pool list)\nreturn 1')).toThrow(/has no name/);
  });

  it('sends named keys and arguments in the declared order, then the tail; booleans as 1 and 0', async () => {
    const script = RedisScript.load('t-order', file('order.lua', '-- KEYS[1] a\n-- KEYS[2] b\n-- KEYS[3..] more\n-- ARGV[1] x\n-- ARGV[2] flag\nreturn 1\n'), {
      keys: ['a', 'b'],
      args: ['x', 'flag'],
    });
    const { calls, client } = recorder();
    await script.run(client, { b: 'kb', a: 'ka' }, { flag: true, x: 7 }, { keys: ['k3'], args: ['tail'] });
    await script.run(client, { a: 'ka', b: 'kb' }, { x: 'y', flag: false });
    expect(calls).toEqual([
      [script.sha, 3, 'ka', 'kb', 'k3', 7, 1, 'tail'],
      [script.sha, 2, 'ka', 'kb', 'y', 0],
    ]);
  });

  it('refuses, when loading, a header that names other slots than the wrapper, and fills parts', () => {
    const url = file('mismatch.lua', '-- KEYS[1] lock\n-- ARGV[1] token\nreturn 1\n');
    expect(() => RedisScript.load('t-mismatch', url, { keys: ['lock'], args: ['holder'] })).toThrow(
      /t-mismatch.*declares KEYS lock and ARGV token; the wrapper names KEYS lock and ARGV holder/,
    );
    const guarded = file('guarded.lua', '-- KEYS[1] list\n-- ARGV (none)\n{{guard}}\nreturn {{answer}}\n');
    expect(RedisScript.load('t-parts', guarded, { keys: ['list'], args: [] }, { guard: 'if not KEYS[1] then return 0 end', answer: '42' }).source).toBe(
      '-- KEYS[1] list\n-- ARGV (none)\nif not KEYS[1] then return 0 end\nreturn 42\n',
    );
    expect(() => RedisScript.load('t-missing', guarded, { keys: ['list'], args: [] }, { guard: '' })).toThrow(/no part named "answer"/);
    expect(() => RedisScript.load('t-extra', guarded, { keys: ['list'], args: [] }, { guard: '', answer: '1', other: '' })).toThrow(/parts not used: other/);
  });
});

describe('the Lua scripts of the platform', () => {
  const src = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.lua'))
    .map((e) => path.join(e.parentPath, e.name));
  const wrappers = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'))
    .join('\n');

  it('each starts with its KEYS/ARGV list and is loaded by a wrapper in its folder', () => {
    expect(files.length).toBeGreaterThanOrEqual(33); // a floor: the scripts are found (33 since the shared config publishes in one script)
    for (const f of files) {
      expect(() => declaredSlots(readFileSync(f, 'utf8')), f).not.toThrow();
      expect(wrappers.includes(`new URL('./${path.basename(f)}', import.meta.url)`), `${f} has a wrapper`).toBe(true);
    }
  });
});
