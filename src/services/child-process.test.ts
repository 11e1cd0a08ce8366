import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../test/support/wait.js';
import { alive } from './child-process.js';

describe('alive', () => {
  it('finds this process, and not a pid that has ended', async () => {
    expect(alive(process.pid)).toBe(true);
    const child = spawn('true');
    await new Promise((r) => child.once('exit', r));
    expect(alive(child.pid!)).toBe(false);
  });

  it('takes a zombie nobody reaps (a killed owner under a pid 1 that does not reap) for gone', async () => {
    // A background reader of the shell that then becomes `sleep`, which never reaps it: the reader
    // ends once a line comes in, after the exec (the shell itself could have reaped it before).
    const parent = spawn('sh', ['-c', 'exec 3<&0; (read line <&3) & echo $!; exec sleep 30 3<&-'], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d: Buffer) => r(d.toString().trim()))));
      await waitFor(
        () => /\) S /.test(readFileSync(`/proc/${parent.pid}/stat`, 'utf8')) && readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() === 'sleep',
        {
          timeoutMs: 10_000,
          message: 'the shell become sleep',
        },
      );
      expect(alive(pid)).toBe(true);
      parent.stdin!.write('go\n');
      await waitFor(() => /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), { timeoutMs: 10_000, message: 'the child a zombie' });
      expect(alive(pid)).toBe(false);
      expect(alive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
