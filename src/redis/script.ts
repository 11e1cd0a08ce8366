/**
 * A Lua script run by EVALSHA, loaded on first NOSCRIPT (after a Redis restart too).
 *
 * Every script is a `.lua` file next to the module that runs it (its typed wrapper), read once
 * when that module loads: from src/ under tsx and vitest, from dist/ after `npm run build`
 * (src/setup/copy-lua.mjs copies the files there). A file starts with its KEYS/ARGV list, one
 * slot a line, each with the name the wrapper uses for it:
 *
 *   -- KEYS[1] lease         the lease key
 *   -- KEYS[2] tokenCounter  its fencing-token counter (same slot)
 *   -- ARGV[1] instanceId
 *   -- ARGV[2] ttlMs
 *   -- KEYS[3..] ...         a variable tail (also KEYS[3..4] for an optional pair); no name
 *   -- ARGV (none)
 *
 * The wrapper declares the same names (`RedisScript.load(name, url, { keys, args })`), checked
 * against the file when it is loaded, and run() takes keys and arguments by name and puts them in
 * that order: no call site counts positions. A boolean argument is sent as 1 or 0. A variable
 * tail (more keys, more arguments, the credential guard's) goes in `tail`, after the named ones.
 * Shared Lua is put in with a placeholder `{{name}}`, filled from `parts` (the credential guard of
 * the hot routes: src/revocation/guarded-script.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './connection.js';
import { toError } from '../errors.js';

export type ScriptArg = string | number | boolean;

export interface ScriptLayout<K extends string, A extends string> {
  keys: readonly K[];
  args: readonly A[];
}

/** What comes after the named keys and arguments. */
export interface ScriptTail {
  keys?: readonly string[];
  args?: readonly ScriptArg[];
}

const SLOT_NAME = /^[a-z][A-Za-z0-9]*$/;

/** The named KEYS and ARGV slots a script's leading comment declares (tails and "(none)" carry no name). */
export function declaredSlots(source: string): { keys: string[]; args: string[] } {
  const header: string[] = [];
  for (const line of source.split('\n')) {
    if (!line.startsWith('--')) break;
    header.push(line);
  }
  if (!header.length || !/^-- (KEYS|ARGV)\b/.test(header[0]!)) throw new Error('the script does not start with its KEYS/ARGV list');
  const slots = { keys: [] as string[], args: [] as string[] };
  for (const line of header) {
    const m = /^-- (KEYS|ARGV)\[(\d+)(\.\.\d*)?\]\s+(\S+)/.exec(line);
    if (!m || m[3]) continue;
    const list = m[1] === 'KEYS' ? slots.keys : slots.args;
    const [index, name] = [Number(m[2]), m[4]!];
    if (index !== list.length + 1) throw new Error(`${m[1]}[${index}] is out of order (expected ${m[1]}[${list.length + 1}])`);
    if (!SLOT_NAME.test(name)) throw new Error(`${m[1]}[${index}] has no name (a lower camel case word after the slot)`);
    list.push(name);
  }
  return slots;
}

/** The file's text with every `{{name}}` filled from `parts`; each part must be used. */
function fill(text: string, parts: Readonly<Record<string, string>>): string {
  const used = new Set<string>();
  const filled = text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const part = parts[name];
    if (part === undefined) throw new Error(`no part named "${name}"`);
    used.add(name);
    return part;
  });
  const unused = Object.keys(parts).filter((p) => !used.has(p));
  if (unused.length) throw new Error(`parts not used: ${unused.join(', ')}`);
  return filled;
}

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

const NONE: readonly never[] = [];

/** A script argument as Redis gets it: booleans as 1 and 0. */
const argWord = (v: ScriptArg): string | number => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

export class RedisScript<K extends string = string, A extends string = string> {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
    readonly layout: ScriptLayout<K, A>,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Reads the script from `file` (`new URL('./x.lua', import.meta.url)`), fills its parts and
   * checks that its KEYS/ARGV list names the slots `layout` names, in the same order. Throws
   * (at module load) when it does not.
   */
  static load<const K extends string, const A extends string>(
    name: string,
    file: URL,
    layout: ScriptLayout<K, A>,
    parts: Readonly<Record<string, string>> = {},
  ): RedisScript<K, A> {
    const path = fileURLToPath(file);
    try {
      const source = fill(readFileSync(path, 'utf8'), parts);
      const declared = declaredSlots(source);
      if (!same(declared.keys, layout.keys) || !same(declared.args, layout.args)) {
        throw new Error(
          `it declares KEYS ${declared.keys.join(', ') || '-'} and ARGV ${declared.args.join(', ') || '-'}; the wrapper names KEYS ${layout.keys.join(', ') || '-'} and ARGV ${layout.args.join(', ') || '-'}`,
        );
      }
      return new RedisScript(name, source, layout);
    } catch (err) {
      throw new Error(`Lua script "${name}" (${path}): ${toError(err).message}`, { cause: err });
    }
  }

  run<T = unknown>(client: RedisClient, keys: Readonly<Record<K, string>>, args: Readonly<Record<A, ScriptArg>>, tail: ScriptTail = {}): Promise<T> {
    // The command's words in one array, built with plain loops: some scripts run on every request.
    const layout = this.layout;
    const tailKeys = tail.keys ?? NONE;
    const tailArgs = tail.args ?? NONE;
    const words: (string | number)[] = [this.sha, layout.keys.length + tailKeys.length];
    for (const name of layout.keys) words.push(keys[name]);
    for (const key of tailKeys) words.push(key);
    for (const name of layout.args) words.push(argWord(args[name] as ScriptArg));
    for (const arg of tailArgs) words.push(argWord(arg));
    return this.send<T>(client, words);
  }

  /** EVALSHA of `words` (the sha first), and EVAL with the source when Redis does not have the script. */
  private send<T>(client: RedisClient, words: (string | number)[]): Promise<T> {
    return (client.evalsha(...(words as [string, number, ...(string | number)[]])) as Promise<T>).catch((err: unknown) => {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      words[0] = this.source;
      return client.eval(...(words as [string, number, ...(string | number)[]])) as Promise<T>;
    });
  }
}
