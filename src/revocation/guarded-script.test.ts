import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GuardedScript, isRevokedReply, isUncheckedReply, runGuarded } from './guarded-script.js';
import { Revocation, TokenRevokedError } from './revocation.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-guarded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return pathToFileURL(path.join(dir, name));
};

const GUARDED = `-- KEYS[1] pool
-- KEYS[2] consumed
-- KEYS[3..4] (optional) the caller's blacklist key and credential state key
-- ARGV[1] count
-- ARGV[2..2] (with KEYS[3]) the state the caller's credential carries
{{revocationGuard}}
return 1
`;

/** What a Redis client receives: EVALSHA's arguments. */
function recorder() {
  const calls: unknown[][] = [];
  return { calls, client: { evalsha: async (...a: unknown[]) => (calls.push(a), 'ok') } as never };
}

const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('GuardedScript', () => {
  it('puts the guard first, on the key slots after the ones the wrapper names', () => {
    const script = GuardedScript.load('t-guard', file('guard.lua', GUARDED), { keys: ['pool', 'consumed'], args: ['count'] });
    expect(script.source.split('\n').slice(5, 8)).toEqual([
      'if KEYS[3] then',
      "  if redis.call('EXISTS', KEYS[3]) == 1 then return redis.error_reply('REVOKED the session is logged out') end",
      "  if redis.call('GET', KEYS[4]) ~= ARGV[#ARGV] then return redis.error_reply('UNCHECKED the credential state is not the one the credential carries') end",
    ]);
  });

  it('refuses a script whose header does not declare the guard right after its own slots', () => {
    const shifted = GUARDED.replace('KEYS[3..4]', 'KEYS[4..5]');
    expect(() => GuardedScript.load('t-shifted', file('shifted.lua', shifted), { keys: ['pool', 'consumed'], args: ['count'] })).toThrow(/KEYS\[3\.\.4\]/);
    const noArg = GUARDED.replace("-- ARGV[2..2] (with KEYS[3]) the state the caller's credential carries\n", '');
    expect(() => GuardedScript.load('t-noarg', file('noarg.lua', noArg), { keys: ['pool', 'consumed'], args: ['count'] })).toThrow(/ARGV\[2\.\.2\]/);
    expect(() =>
      GuardedScript.load('t-noguard', file('noguard.lua', GUARDED.replace('{{revocationGuard}}\n', '')), { keys: ['pool', 'consumed'], args: ['count'] }),
    ).toThrow(/parts not used: revocationGuard/);
  });

  it("sends the request's blacklist and state keys and its expected state after the script's own, and nothing without a revocation", async () => {
    const script = GuardedScript.load('t-run', file('run.lua', GUARDED), { keys: ['pool', 'consumed'], args: ['count'] });
    const revocation = new Revocation('bl', 'state', '3:user', async () => undefined);
    const { calls, client } = recorder();
    await script.run(client, { pool: 'p', consumed: 'c' }, { count: 2 }, revocation);
    await script.run(client, { pool: 'p', consumed: 'c' }, { count: 2 }, undefined);
    expect(calls.map((c) => c.slice(1))).toEqual([
      [4, 'p', 'c', 'bl', 'state', 2, '3:user'],
      [2, 'p', 'c', 2],
    ]);
    expect(revocation.taken).toBe(true);
  });
});

describe('runGuarded', () => {
  it('makes the full check on UNCHECKED and runs once more; REVOKED is a 401', async () => {
    let checks = 0;
    const revocation = new Revocation('bl', 'state', '1', async () => void checks++);
    let runs = 0;
    const answer = await runGuarded(revocation, async () => {
      if (runs++ === 0) throw replyError('UNCHECKED the credential state is not the one the credential carries');
      return 'popped';
    });
    expect([answer, runs, checks]).toEqual(['popped', 2, 1]);
    await expect(runGuarded(revocation, async () => Promise.reject(replyError('REVOKED the session is logged out')))).rejects.toBeInstanceOf(TokenRevokedError);
    expect(isRevokedReply(replyError('ERR REVOKED x'))).toBe(false);
    expect(isUncheckedReply(new Error('UNCHECKED x'))).toBe(false);
  });
});
